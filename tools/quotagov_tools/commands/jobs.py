"""``quotagov jobs``: the researcher's command line for quotagov's API.

Subcommands: ``submit FILE --team T --class C --level L``, ``list [--team T]
[--state S]``, ``show ID``, ``why ID``, ``watch ID``, ``escalate ID --level L --reason
R``, ``decide ID --choice resubmit|reclassify|abandon``. Each prints a table for
people, or with ``--json`` the API's answer as JSON.

Which API, in this order: ``--api-url``, ``$QUOTAGOV_API_URL``, the ``api_url`` of the
config file (``--config``, ``$QUOTAGOV_CONFIG``, default
``~/.config/quotagov/client.toml``), or the ``ApiUrl`` output of CloudFormation stack
``--stack`` (``stack`` in the config file). Requests are signed with SigV4 from
botocore's credential chain (``--profile``/``$AWS_PROFILE``, ``--region``).
``--token TOKEN``, ``--token-file FILE`` or ``$QUOTAGOV_TOKEN`` (a Cognito user pool ID
token) calls the stack's Cognito (JWT) API instead (``JwtApiUrl``; with ``--stack`` that
output is read). ``--as PRINCIPAL`` calls ``quotagov serve`` instead, as that principal:
only with a loopback URL (``http://127.0.0.1:3000``).

Exit codes: 0 done; 1 the API refused (its ``message`` and every ``{path, fault}`` on
stderr; with ``--json`` the answer on stdout); 2 usage or set-up error (options, config
file, FILE, ``--as`` with a URL that is not loopback, no credentials, a token that is
not a JWT or would go over plain http); 3 the API could
not be reached; ``watch`` only: 4 the job ended ``REFUSED`` or ``FAILED``, 5 ``--timeout``
passed first.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tomllib
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_UNREACHABLE, EXIT_JOB_FAILED, EXIT_TIMEOUT = range(6)
#: The config file read when neither ``--config`` nor ``$QUOTAGOV_CONFIG`` names one.
DEFAULT_CONFIG = Path("~/.config/quotagov/client.toml")
#: Config file keys (TOML, top level): the options they give defaults to.
CONFIG_KEYS = ("api_url", "stack", "profile", "region", "team", "as")


class UsageError(Exception):
    """A problem with the options, the config file or FILE (exit 2)."""


def register(subparsers: Any) -> None:
    """Add ``jobs`` and its subcommands."""
    parser = subparsers.add_parser(
        "jobs",
        help="submit, list, show, explain, watch, escalate and decide training jobs "
        "(the API's client)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common = argparse.ArgumentParser(add_help=False)
    where = common.add_argument_group("which API")
    where.add_argument("--api-url", help="the API's base URL (default: $QUOTAGOV_API_URL, config)")
    where.add_argument("--stack", help="read the URL from this CloudFormation stack's ApiUrl")
    where.add_argument("--profile", help="AWS profile (default: botocore's, e.g. $AWS_PROFILE)")
    where.add_argument("--region", help="AWS Region (default: from the URL or the profile)")
    where.add_argument(
        "--as",
        dest="principal",
        metavar="PRINCIPAL",
        help="call quotagov serve as this principal (loopback URLs only)",
    )
    where.add_argument(
        "--token",
        help="Cognito ID token for the JWT API (JwtApiUrl); default: $QUOTAGOV_TOKEN "
        "(prefer --token-file: a command line is visible to other local users)",
    )
    where.add_argument("--token-file", type=Path, help="read the Cognito ID token from FILE")
    where.add_argument("--config", type=Path, help="client config file (TOML)")
    common.add_argument("--json", action="store_true", help="print the API's answer as JSON")

    commands = parser.add_subparsers(dest="jobs_command", metavar="SUBCOMMAND")
    commands.required = True

    submit = commands.add_parser(
        "submit",
        parents=[common],
        help="submit a CreateTrainingJob request (JSON or YAML)",
        description="FILE holds a SageMaker CreateTrainingJob request, or a whole POST /jobs "
        "body (its serviceRequestPayload is sent; the options override its team, class and "
        "level).",
    )
    submit.add_argument("file", type=Path, metavar="FILE")
    submit.add_argument("--team")
    submit.add_argument("--class", dest="workload_class", metavar="CLASS")
    submit.add_argument("--level", help="priority level")
    submit.add_argument("--job-name")
    submit.add_argument("--share", help="ask for this quota share")
    submit.add_argument("--checkpoint-interval", type=int, metavar="SECONDS")
    submit.add_argument("--client-request-id", help="idempotency key: retries are one job")
    submit.set_defaults(func=run_submit)

    listing = commands.add_parser("list", parents=[common], help="a team's jobs, newest first")
    listing.add_argument("--team", help="default: the config file's team")
    listing.add_argument("--state", help="QUEUED, SUBMITTED, REFUSED or FAILED")
    listing.add_argument("--limit", type=int, default=None, help="at most this many")
    listing.set_defaults(func=run_list)

    for name, help_text, func in (
        ("show", "a job: its record, Batch's view, its chain", run_show),
        ("why", "why a job waits: position, reason, estimated start", run_why),
    ):
        command = commands.add_parser(name, parents=[common], help=help_text)
        command.add_argument("job_id", metavar="ID")
        command.set_defaults(func=func)

    watch = commands.add_parser(
        "watch", parents=[common], help="follow a job's state changes until it is final"
    )
    watch.add_argument("job_id", metavar="ID")
    watch.add_argument("--interval", type=float, default=10.0, help="seconds between reads")
    watch.add_argument("--timeout", type=float, default=None, help="give up after seconds")
    watch.set_defaults(func=run_watch)

    escalate = commands.add_parser(
        "escalate", parents=[common], help="ask for a higher priority level"
    )
    escalate.add_argument("job_id", metavar="ID")
    escalate.add_argument("--level", required=True)
    escalate.add_argument("--reason", required=True)
    escalate.set_defaults(func=run_escalate)

    decide = commands.add_parser(
        "decide", parents=[common], help="decide a job whose preemption retries ran out"
    )
    decide.add_argument("job_id", metavar="ID")
    decide.add_argument("--choice", required=True, choices=("resubmit", "reclassify", "abandon"))
    decide.set_defaults(func=run_decide)


# -- set-up ----------------------------------------------------------------------------


def load_config(path: Path | None) -> dict[str, str]:
    """The client config file's settings (:data:`CONFIG_KEYS`); {} when the default file
    does not exist. Raises :class:`UsageError` for an unreadable or unknown key."""
    explicit = path or (
        Path(os.environ["QUOTAGOV_CONFIG"]) if "QUOTAGOV_CONFIG" in os.environ else None
    )
    chosen = (explicit or DEFAULT_CONFIG).expanduser()
    if explicit is None and not chosen.exists():
        return {}
    try:
        data = tomllib.loads(chosen.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"config {chosen}: {exc}") from exc
    unknown = sorted(set(data) - set(CONFIG_KEYS))
    if unknown:
        raise UsageError(
            f"config {chosen}: unknown keys {', '.join(unknown)} (known: {', '.join(CONFIG_KEYS)})"
        )
    return {key: str(value) for key, value in data.items()}


def stack_api_url(
    stack: str, *, profile: str | None, region: str | None, output: str = "ApiUrl"
) -> str:
    """The ``output`` output (``ApiUrl``, or ``JwtApiUrl`` for the Cognito API) of
    CloudFormation stack ``stack`` (``DescribeStacks``)."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        session = boto3.Session(profile_name=profile, region_name=region)
        stacks = session.client("cloudformation").describe_stacks(StackName=stack)["Stacks"]
    except (BotoCoreError, ClientError) as exc:
        raise UsageError(f"--stack {stack}: {exc}") from exc
    for found in stacks[0].get("Outputs", []) if stacks else []:
        if found.get("OutputKey") == output:
            return str(found["OutputValue"])
    raise UsageError(f"--stack {stack}: the stack has no {output} output")


def client_for(args: argparse.Namespace, config: dict[str, str]) -> Any:
    """The :class:`~quotagov.client.Client` the options and config name."""
    from quotagov.client import Client

    profile = args.profile or config.get("profile")
    region = args.region or config.get("region")
    url = args.api_url or os.environ.get("QUOTAGOV_API_URL") or config.get("api_url")
    stack = args.stack or config.get("stack")
    token = token_of(args)
    if not url and stack:
        output = "JwtApiUrl" if token else "ApiUrl"
        url = stack_api_url(stack, profile=profile, region=region, output=output)
    if not url:
        raise UsageError(
            "no API URL: give --api-url, QUOTAGOV_API_URL, api_url in the config file, or --stack"
        )
    principal = args.principal or config.get("as")
    if principal and token:
        raise UsageError("--as and a token: choose one (quotagov serve, or the Cognito API)")
    if principal:
        return Client.local(url, principal)
    if token:
        return Client.with_token(url, token)
    return Client.deployed(url, profile=profile, region=region)


def token_of(args: argparse.Namespace) -> str | None:
    """The Cognito ID token: ``--token``, else ``--token-file``'s text, else
    ``$QUOTAGOV_TOKEN``; None when none is given.

    Raises:
        UsageError: ``--token-file`` cannot be read or is empty.
    """
    if args.token:
        return str(args.token)
    if args.token_file is not None:
        try:
            text: str = Path(args.token_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise UsageError(f"--token-file {args.token_file}: {exc.strerror or exc}") from exc
        if not text:
            raise UsageError(f"--token-file {args.token_file}: empty")
        return text
    return os.environ.get("QUOTAGOV_TOKEN") or None


def read_request_file(path: Path) -> dict[str, Any]:
    """FILE as a mapping (JSON, or YAML for ``.yaml``/``.yml``, or YAML when not JSON)."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"FILE {path}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise UsageError(f"FILE {path}: not valid JSON/YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise UsageError(f"FILE {path}: must hold an object (a CreateTrainingJob request)")
    return data


# -- output ----------------------------------------------------------------------------


def iso(when: float | str | None) -> str:
    """An instant as ISO 8601 UTC (``2026-12-03T15:20:52Z``): the API's instants are that
    already (:mod:`quotagov.api_times`), epoch seconds (the local clock) are converted;
    ``-`` for None."""
    if when is None:
        return "-"
    if isinstance(when, str):
        return when
    return datetime.fromtimestamp(float(when), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    """``rows`` under ``header`` in left-aligned columns (None shown as ``-``)."""
    cells = [[str(h) for h in header]] + [["-" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    )


def pairs(items: Sequence[tuple[str, Any]]) -> str:
    """``name: value`` lines, names aligned."""
    width = max(len(name) for name, _ in items)
    return "\n".join(f"{name + ':':<{width + 1}} {'-' if v is None else v}" for name, v in items)


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    if args.json:
        print(json.dumps(data, indent=2, sort_keys=True, default=str))
    else:
        print(text)


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", exclude_none=False)


# -- commands --------------------------------------------------------------------------


def _run(args: argparse.Namespace, body: Any) -> int:
    """Run ``body(client, config)``; map the client's errors to the exit codes."""
    from quotagov.client import ApiError, TransportError

    try:
        config = load_config(args.config)
        client = client_for(args, config)
        code: int = body(client, config)
        return code
    except UsageError as exc:
        print(f"quotagov jobs: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ApiError as exc:
        if args.json:
            print(json.dumps({"status": exc.status, **exc.body}, indent=2, sort_keys=True))
        print(f"quotagov jobs: {exc.status}: {exc.message}", file=sys.stderr)
        for fault in exc.faults:
            print(f"  {fault.path}: {fault.fault}", file=sys.stderr)
        return EXIT_REFUSED
    except TransportError as exc:
        message = str(exc)
        setup = message.startswith(("--as", "region", "no AWS credentials", "api url", "token"))
        print(f"quotagov jobs: {message}", file=sys.stderr)
        return EXIT_USAGE if setup else EXIT_UNREACHABLE


def run_submit(args: argparse.Namespace) -> int:
    """``jobs submit``."""

    def body(client: Any, config: dict[str, str]) -> int:
        data = read_request_file(args.file)
        whole = "serviceRequestPayload" in data
        payload = data["serviceRequestPayload"] if whole else data
        given = data if whole else {}
        team = args.team or given.get("team") or config.get("team")
        workload_class = args.workload_class or given.get("workloadClass")
        level = args.level or given.get("priorityLevel")
        missing = [
            n
            for n, v in (("--team", team), ("--class", workload_class), ("--level", level))
            if not v
        ]
        if missing:
            raise UsageError(f"submit: {', '.join(missing)} required")
        accepted = client.submit(
            payload,
            team=team,
            workload_class=workload_class,
            level=level,
            job_name=args.job_name or given.get("jobName"),
            quota_share=args.share or given.get("quotaShareName"),
            checkpoint_interval_seconds=args.checkpoint_interval
            or given.get("checkpointIntervalSeconds"),
            client_request_id=args.client_request_id or given.get("clientRequestId"),
            retry_strategy=given.get("retryStrategy"),
            timeout_config=given.get("timeoutConfig"),
            tags=given.get("tags"),
        )
        _emit(
            args,
            _dump(accepted),
            pairs(
                [
                    ("submission", accepted.submissionId),
                    ("state", accepted.state),
                    ("quota share", accepted.quotaShareName),
                    ("schedulingPriority", accepted.schedulingPriority),
                    ("preemption retries", accepted.preemptionRetriesBeforeTermination),
                    ("Batch job", accepted.batchJobId),
                ]
            ),
        )
        return EXIT_OK

    return _run(args, body)


def run_list(args: argparse.Namespace) -> int:
    """``jobs list``."""

    def body(client: Any, config: dict[str, str]) -> int:
        team = args.team or config.get("team")
        if not team:
            raise UsageError("list: --team required (or team in the config file)")
        jobs = client.list_jobs(team, state=args.state, limit=args.limit)
        rows = [
            [
                j.submissionId,
                j.jobName,
                j.state,
                j.quotaShareName,
                iso(j.createdAt),
            ]
            for j in jobs
        ]
        _emit(
            args,
            {"jobs": [_dump(j) for j in jobs]},
            table(rows, ["SUBMISSION", "NAME", "STATE", "SHARE", "CREATED"])
            if rows
            else f"no jobs for team {team}",
        )
        return EXIT_OK

    return _run(args, body)


def show_text(view: Any) -> str:
    """The human form of a job view."""
    from quotagov.client import current_status

    extra = view.model_dump(mode="json")
    chain = extra.get("chain") or {}
    job_state = extra.get("jobState") or {}
    items: list[tuple[str, Any]] = [
        ("submission", view.submissionId),
        ("name", view.jobName),
        ("team", view.team),
        ("class", extra.get("workloadClass")),
        ("level", extra.get("priorityLevel")),
        ("state", view.state),
        ("status", current_status(view)),
        ("quota share", extra.get("quotaShareName")),
        ("schedulingPriority", extra.get("schedulingPriority")),
        ("Batch job", extra.get("batchJobId")),
        ("created", iso(extra.get("createdAt"))),
        ("preemptions", job_state.get("preemptionCount")),
        ("resubmission of", chain.get("predecessorId")),
        ("resubmitted as", ", ".join(chain.get("successorIds") or []) or None),
    ]
    text = pairs(items)
    for reason in view.reasons:
        text += f"\n  reason: {reason}"
    return text


def run_show(args: argparse.Namespace) -> int:
    """``jobs show``."""

    def body(client: Any, config: dict[str, str]) -> int:
        view = client.get_job(args.job_id)
        _emit(args, _dump(view), show_text(view))
        return EXIT_OK

    return _run(args, body)


def why_text(waiting: Any) -> str:
    """The human form of :class:`~quotagov.client.Waiting`."""
    if waiting.reason is None and waiting.error is None:
        where = waiting.status or waiting.state
        return f"{waiting.submission_id} is not waiting for capacity: {where}"
    position = "-"
    if waiting.queue_position is not None:
        position = (
            f"{waiting.queue_position} of {waiting.queue_length} in the queue, "
            f"{waiting.share_position} in its share"
        )
    return pairs(
        [
            ("submission", waiting.submission_id),
            ("status", waiting.status or waiting.state),
            ("position", position),
            ("reason", f"{waiting.reason} ({waiting.reason_code})" if waiting.reason else None),
            (
                "estimated start",
                iso(waiting.estimated_start_at)
                if waiting.estimated_start_at is not None
                else "unknown (a job ahead has no limit)",
            ),
            ("note", waiting.error),
        ]
    )


def run_why(args: argparse.Namespace) -> int:
    """``jobs why``."""

    def body(client: Any, config: dict[str, str]) -> int:
        waiting = client.why(args.job_id)
        _emit(args, _dump(waiting), why_text(waiting))
        return EXIT_OK

    return _run(args, body)


def progress_line(view: Any) -> str:
    """One line per change: time, submission, status, and where it waits."""
    from quotagov.client import current_status, waiting_of

    waiting = waiting_of(view)
    line = f"{iso(time.time())}  {view.submissionId}  {current_status(view)}"
    if waiting.queue_position is not None:
        line += f"  position {waiting.queue_position}/{waiting.queue_length}"
    if waiting.reason_code:
        line += f"  {waiting.reason_code}"
    if waiting.estimated_start_at is not None:
        line += f"  start by {iso(waiting.estimated_start_at)}"
    return line


def run_watch(args: argparse.Namespace) -> int:
    """``jobs watch``: a line per change (or a JSON view per line), until final."""

    def body(client: Any, config: dict[str, str]) -> int:
        from quotagov.client import current_status

        last = None
        try:
            for view in client.watch(args.job_id, interval=args.interval, timeout=args.timeout):
                last = view
                text = json.dumps(_dump(view), sort_keys=True) if args.json else progress_line(view)
                print(text, flush=True)
        except TimeoutError as exc:
            print(f"quotagov jobs: {exc}", file=sys.stderr)
            return EXIT_TIMEOUT
        if last is not None and current_status(last) in ("REFUSED", "FAILED"):
            return EXIT_JOB_FAILED
        return EXIT_OK

    return _run(args, body)


def run_escalate(args: argparse.Namespace) -> int:
    """``jobs escalate``."""

    def body(client: Any, config: dict[str, str]) -> int:
        answer = client.escalate(args.job_id, args.level, args.reason)
        _emit(
            args,
            _dump(answer),
            pairs(
                [
                    ("escalation", answer.escalationId),
                    ("job", answer.jobId),
                    ("status", answer.status),
                    ("level", f"{answer.requestedLevel} ({answer.requestedPriority})"),
                    ("approval", "not needed (direct)" if answer.direct else "requested in Slack"),
                ]
            ),
        )
        return EXIT_OK

    return _run(args, body)


def run_decide(args: argparse.Namespace) -> int:
    """``jobs decide``."""

    def body(client: Any, config: dict[str, str]) -> int:
        answer = client.decide(args.job_id, args.choice)
        _emit(
            args,
            _dump(answer),
            pairs(
                [("status", answer.status), ("choice", answer.choice), ("changed", answer.changed)]
            ),
        )
        return EXIT_OK

    return _run(args, body)
