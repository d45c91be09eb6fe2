"""``quotagov invoke FUNCTION --event FILE``: run one handler in-process, like ``sam local invoke``.

``FUNCTION`` is a logical id of ``template.yaml`` (``JobsApiFunction``...); its handler
path and environment come from the template. The handler runs against the embedded
local runtime (moto, simulated Batch, fake Slack; see :mod:`quotagov_tools.local.runtime`),
and what the invocation set off (queue messages, EventBridge events) is delivered
afterwards. The handler's return value is printed as JSON on stdout.

Every message between quotagov's functions is sealed with the stack's KMS message key
(proof of sender, :mod:`quotagov.governance.provenance`), so a sample SQS batch as
recorded is refused (its records come back in ``batchItemFailures``). ``--seal`` seals
each SQS record's body anew with the local runtime's message key, as the queue's
producer would: the purpose from the queue its ``eventSourceARN`` names, the sender
from its ``attributes.SenderId`` (``<role id>:<function>``) when that names a function
of the template sending to that queue, else the first such function.

Exit codes: 0 when the handler returned, 1 when it raised (the error on stderr),
2 for a usage error (unknown function, unreadable event file, a record ``--seal``
cannot seal).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import sys
from pathlib import Path
from typing import Any

from quotagov.governance.provenance import (
    APPLY_QUEUE,
    AUDIT_QUEUE,
    NOTICE_QUEUE,
    SUBMISSION_QUEUE,
)
from quotagov_tools.deploy.template import TemplateError


def register(subparsers: Any) -> None:
    """Add the ``invoke`` subcommand."""
    parser = subparsers.add_parser(
        "invoke",
        help="run one function's handler in-process on an event file",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("function", metavar="FUNCTION", help="logical id in template.yaml")
    parser.add_argument(
        "--event", "-e", required=True, type=Path, help="event JSON file ('-' for stdin)"
    )
    parser.add_argument("--template", type=Path, default=None, help="SAM template (template.yaml)")
    parser.add_argument(
        "--resign-slack",
        action="store_true",
        help="sign the event's body anew with the runtime's Slack signing secret and clock "
        "(a recorded Slack request is otherwise stale or signed with another secret: 401)",
    )
    parser.add_argument(
        "--seal",
        action="store_true",
        help="seal each SQS record's body with the runtime's message key as the queue's "
        "producer would (a recorded message carries no valid proof of sender: refused)",
    )
    parser.set_defaults(func=run)


#: The environment variable naming each sealed queue, and the purpose its messages are
#: sealed for (as :meth:`quotagov.wiring.Services.sealer` seals them).
QUEUE_PURPOSES = {
    "AUDIT_QUEUE_URL": AUDIT_QUEUE,
    "APPLY_QUEUE_URL": APPLY_QUEUE,
    "OWNER_NOTICE_QUEUE_URL": NOTICE_QUEUE,
    "SUBMISSION_QUEUE_URL": SUBMISSION_QUEUE,
}


class SealError(ValueError):
    """A record ``--seal`` cannot seal (names the record and the field at fault)."""


def _producers(
    environments: dict[str, dict[str, str]], arn: str, consumer: str
) -> tuple[str, list[str]]:
    """The purpose of the queue ``arn`` names and the functions (other than
    ``consumer``) whose environment holds that queue's URL, sorted.

    Raises:
        SealError: ``arn`` names no sealed queue of the template.
    """
    from quotagov.handlers.sqs_batches import queue_arn_matches_url

    purpose = ""
    senders: set[str] = set()
    for function, env in environments.items():
        for variable, name in QUEUE_PURPOSES.items():
            if queue_arn_matches_url(arn, env.get(variable, "")):
                purpose = name
                if function != consumer:
                    senders.add(function)
    if not purpose:
        known = sorted(
            {
                env[v].rsplit("/", 1)[-1]
                for env in environments.values()
                for v in QUEUE_PURPOSES
                if env.get(v)
            }
        )
        raise SealError(
            f"eventSourceARN: {arn!r} names no sealed queue of the stack "
            f"(local queues: {', '.join(known)})"
        )
    return purpose, sorted(senders)


def seal_records(
    event: Any,
    environments: dict[str, dict[str, str]],
    consumer: str,
    seal: Any,
    now: float,
) -> Any:
    """A copy of the SQS batch ``event`` whose records' bodies are sealed.

    Args:
        event: ``{"Records": [...]}``; records whose ``eventSource`` is not ``aws:sqs``
            are left as they are.
        environments: each template function's environment (the runtime's).
        consumer: the invoked function (never taken as the sender).
        seal: :func:`quotagov.governance.provenance.seal_message` bound to the message
            key: ``(purpose, sender, sent_at, body) -> sealed text``.
        now: ``sentAt``, epoch seconds (the runtime's clock).

    Raises:
        SealError: a record whose ``eventSourceARN`` names no sealed queue, or whose
            ``body`` is not a string (the message is named by its index).
    """
    if not isinstance(event, dict) or not isinstance(event.get("Records"), list):
        raise SealError('Records: --seal needs an SQS batch ({"Records": [...]})')
    sealed = copy.deepcopy(event)
    for index, record in enumerate(sealed["Records"]):
        if not isinstance(record, dict) or record.get("eventSource") != "aws:sqs":
            continue
        where = f"Records[{index}]"
        body = record.get("body")
        if not isinstance(body, str):
            raise SealError(f"{where}.body: must be a string")
        try:
            purpose, senders = _producers(
                environments, str(record.get("eventSourceARN") or ""), consumer
            )
        except SealError as exc:
            raise SealError(f"{where}.{exc}") from None
        attributes = record.get("attributes") or {}
        claimed = str(attributes.get("SenderId") or "").rsplit(":", 1)[-1]
        if claimed not in senders:
            if not senders:
                raise SealError(f"{where}.eventSourceARN: no function sends to that queue")
            claimed = senders[0]
        record["body"] = seal(purpose, claimed, now, body)
    return sealed


def _read_event(path: Path) -> Any:
    text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    return json.loads(text)


def _seal(runtime: Any, function: str, event: Any) -> Any:
    """``event`` with its SQS records sealed under the runtime's message key."""
    import functools

    from quotagov.governance.provenance import seal_message
    from quotagov.settings import Settings
    from quotagov.wiring import Services

    mac = Services(Settings.from_env(runtime.environments[function])).message_mac
    if mac is None:
        raise SealError("the stack has no message key (MESSAGE_KEY): nothing to seal with")
    seal = functools.partial(seal_message, mac)
    return seal_records(event, runtime.environments, function, seal, runtime.clock.now())


def run(args: argparse.Namespace) -> int:
    """Run the handler; print its result; return the exit code."""
    from quotagov_tools.local.fake_slack import sign_event
    from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions

    try:
        event = _read_event(args.event)
    except (OSError, ValueError) as exc:
        print(f"quotagov invoke: --event {args.event}: {exc}", file=sys.stderr)
        return 2
    # The handlers' logs and metrics (Powertools writes them to stdout, as in Lambda)
    # go to stderr, so that stdout carries only the result.
    with contextlib.redirect_stdout(sys.stderr):
        try:
            runtime = LocalRuntime(RuntimeOptions(template=args.template)).start()
        except TemplateError as exc:
            print(f"quotagov invoke: {exc}", file=sys.stderr)
            return 2
        try:
            if args.function not in runtime.functions:
                known = ", ".join(sorted(runtime.functions))
                print(
                    f"quotagov invoke: unknown function {args.function!r} (template has: {known})",
                    file=sys.stderr,
                )
                return 2
            if args.resign_slack and isinstance(event, dict):
                event = sign_event(event, runtime.signing_secret, runtime.clock.now())
            if args.seal:
                try:
                    event = _seal(runtime, args.function, event)
                except SealError as exc:
                    print(f"quotagov invoke: --seal: {exc}", file=sys.stderr)
                    return 2
            record = runtime.invoke(args.function, event)
            runtime.pump()
        finally:
            runtime.stop()
    if not record.ok:
        print(f"quotagov invoke: {args.function} raised {record.error}", file=sys.stderr)
        return 1
    print(json.dumps(record.result, indent=2, sort_keys=True, default=str))
    return 0
