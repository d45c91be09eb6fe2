"""What one governed job costs in AWS calls and dollars, measured through the local runtime.

Run: ``.venv/bin/python benchmarks/aws_cost.py [--jobs 1000] [--escalate-every 10] [--json]``

The embedded runtime (moto-backed AWS, the simulated Batch, the fake Slack) runs a
workload of ``--jobs`` submissions through the real API and handlers: three teams on
the example policy's three quota shares, every job run to its end by the simulated
Batch (so its state events flow through the job-state function), one submission in
``--escalate-every`` escalated to ``high`` and approved in Slack, the audit records
written and sealed, and a signed digest published at the end. The escalation budgets
are raised for the run so that every requested escalation is admitted.

Counted, per job (totals divided by the submissions):

- Lambda: invocations per function and GB-seconds. The billed duration is modelled:
  the handler's CPU time here plus, per AWS call it made, the in-region latency of
  :data:`LATENCY_SECONDS` (moto answers in process, so local wall time says nothing
  about the network); memory from the template's ``MemorySize``.
- DynamoDB read and write request units (on demand), from the sizes of the items read
  and written: writes ``ceil(max(before, after) / 1 KB)`` per item (two for a
  transaction), reads ``ceil(size / 4 KB)`` (half when eventually consistent);
  sizes as DynamoDB counts them (moto's item size: names plus values).
- SQS requests: the functions' sends plus, per SQS-triggered invocation, the event
  source mapping's receive and delete (idle long polls are a fixed monthly cost, not
  counted); EventBridge custom events (``PutEvents`` entries; Batch's and CloudTrail's
  own events on the default bus are free); KMS, S3, Secrets Manager requests; API
  Gateway requests; Slack Web API calls (no dollar price).

Not counted: CloudWatch Logs ingestion and the embedded metrics, CloudTrail, idle SQS
polls, KMS keys' monthly fee, S3 storage. Prices: :data:`PRICES` (list prices, the date
and region beside them); Batch API calls have no charge.

``--compare CHECKOUT`` runs the same workload on another checkout (for example a
``git worktree`` of the previous commit) in a subprocess after this one, so before and
after share one run. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

#: On-demand list prices in USD, us-east-1, as published on the AWS pricing pages
#: (aws.amazon.com/<service>/pricing) and last checked 2025-06; the date matters, since
#: prices change (DynamoDB on demand was halved in November 2024).
PRICES: Mapping[str, float] = {
    "lambda.request": 0.20 / 1e6,
    "lambda.gb_second.arm64": 0.0000133334,
    "dynamodb.write_unit": 0.625 / 1e6,
    "dynamodb.read_unit": 0.125 / 1e6,
    "sqs.request": 0.40 / 1e6,
    "events.custom_event": 1.00 / 1e6,
    "kms.request": 0.03 / 1e4,
    "kms.request.asymmetric": 0.15 / 1e4,
    "s3.put_list": 0.005 / 1e3,
    "s3.get": 0.0004 / 1e3,
    "secretsmanager.request": 0.05 / 1e4,
    "apigateway.rest_request": 3.50 / 1e6,
}

#: Modelled in-region latency of one call, seconds, added to a handler's CPU time to
#: estimate its billed duration (assumed typical figures, not measurements).
LATENCY_SECONDS: Mapping[str, float] = {
    "dynamodb": 0.006,
    "sqs": 0.012,
    "events": 0.015,
    "kms": 0.008,
    "s3": 0.025,
    "secretsmanager": 0.015,
    "ssm": 0.015,
    "batch": 0.060,
    "slack": 0.150,
}

_DYNAMODB_WRITES = {"PutItem", "UpdateItem", "DeleteItem"}
_DYNAMODB_READS = {"GetItem", "Query", "Scan"}
_KMS_ASYMMETRIC = {"Sign", "Verify"}
_S3_GET = {"GetObject", "HeadObject"}


def _local(name: str) -> Any:
    """The local runtime's module ``name``: from the runtime package's own ``local``
    package in a checkout from before the tools were split out (``--compare``), else
    from the tools package. The old place is tried first, so an older checkout on
    ``PYTHONPATH`` never mixes with the tools of this one."""
    for package in ("quotagov", "quotagov_tools"):
        module = ".".join([package, "local", name])
        try:
            return importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is not None and not module.startswith(exc.name):
                raise
    raise ModuleNotFoundError(f"no local runtime module {name!r}")


def _size(attributes: Mapping[str, Any] | None) -> int:
    """Bytes of a DynamoDB item in wire form (``{"name": {"S": ...}}``): names plus values."""
    if not attributes:
        return 0
    from moto.dynamodb.models.dynamo_type import DynamoType

    return sum(len(name.encode()) + DynamoType(value).size() for name, value in attributes.items())


class CostMeter:
    """Counts the functions' AWS calls and the DynamoDB units they consume.

    Registered on the boto3 session the functions' clients come from (botocore
    ``before-parameter-build`` to see each request and the item it will change,
    ``after-call`` to see what a read returned).

    Args:
        current_function: the logical id of the function running now (None outside an
            invocation: provisioning and the runtime's own polling are not counted).
    """

    def __init__(self, current_function: Any) -> None:
        self._current = current_function
        #: where the calls of the running invocation are counted: ``event`` (set off by
        #: the workload) or ``schedule`` (a scheduled rule: a cost per hour, not per job)
        self.bucket = "event"
        self.calls: Counter[tuple[str, str, str]] = Counter()
        self.per_service: Counter[str] = Counter()
        #: (bucket, function, "service:Operation") -> calls
        self.by_function: Counter[tuple[str, str, str]] = Counter()
        self.units: defaultdict[tuple[str, str], float] = defaultdict(float)
        #: (bucket, function, unit) -> DynamoDB request units
        self.units_by_function: defaultdict[tuple[str, str, str], float] = defaultdict(float)
        self.events: Counter[str] = Counter()

    def register(self, session: Any) -> None:
        """Hook the meter onto ``session``'s botocore events."""
        session.events.register("before-parameter-build", self._before)
        session.events.register("after-call.dynamodb", self._after_dynamodb)

    def _before(self, model: Any, params: Mapping[str, Any], context: Any, **_: Any) -> None:
        function = self._current()
        if function is None:
            return
        service = model.service_model.signing_name or model.service_model.endpoint_prefix
        self.calls[(self.bucket, service, model.name)] += 1
        self.per_service[service] += 1
        self.by_function[(self.bucket, function, f"{service}:{model.name}")] += 1
        if context is not None:
            context["quotagov_cost"] = {"params": dict(params), "function": function}
        if service == "events" and model.name == "PutEvents":
            self.events[self.bucket] += len(params.get("Entries", []))
        if service == "dynamodb":
            self._count_writes(model.name, params)

    def _stored(self, table_name: str, key_or_item: Mapping[str, Any]) -> int:
        """Size of the item with the key in ``key_or_item`` as moto holds it now (0: none)."""
        from moto.dynamodb.models import dynamodb_backends
        from moto.dynamodb.models.dynamo_type import DynamoType

        stack = _local("stack")
        ACCOUNT_ID, REGION = stack.ACCOUNT_ID, stack.REGION

        try:
            table = dynamodb_backends[ACCOUNT_ID][REGION].get_table(table_name)
        except Exception:
            return 0
        hash_value = DynamoType(key_or_item[table.hash_key_attr])
        range_value = (
            DynamoType(key_or_item[table.range_key_attr])
            if table.range_key_attr and table.range_key_attr in key_or_item
            else None
        )
        try:
            item = table.get_item(hash_value, range_value)
        except Exception:
            return 0
        return 0 if item is None else int(item.size())

    def _write_units(self, operation: str, request: Mapping[str, Any]) -> int:
        """Write units of one item write: the larger of the item before and after, per KB."""
        table = str(request.get("TableName"))
        key = request.get("Item") if operation == "PutItem" else request.get("Key")
        before = self._stored(table, key or {}) if key else 0
        after = _size(request.get("Item")) if operation == "PutItem" else before
        return max(1, math.ceil(max(before, after) / 1024))

    def _add_units(self, unit: str, amount: float) -> None:
        """Count ``amount`` request units of ``unit`` for the running function."""
        self.units[(self.bucket, unit)] += amount
        function = self._current() or "?"
        self.units_by_function[(self.bucket, function, unit)] += amount

    def _count_writes(self, operation: str, params: Mapping[str, Any]) -> None:
        write = "dynamodb.write_unit"
        if operation in _DYNAMODB_WRITES:
            self._add_units(write, self._write_units(operation, params))
        elif operation == "TransactWriteItems":
            for item in params.get("TransactItems", []):
                for kind, request in item.items():
                    op = {"Put": "PutItem", "ConditionCheck": "GetItem"}.get(kind, f"{kind}Item")
                    self._add_units(write, 2 * self._write_units(op, request))
        elif operation == "BatchWriteItem":
            for table, requests in params.get("RequestItems", {}).items():
                for request in requests:
                    kind = "PutItem" if "PutRequest" in request else "DeleteItem"
                    body = request.get("PutRequest") or request.get("DeleteRequest") or {}
                    self._add_units(write, self._write_units(kind, {"TableName": table, **body}))

    def _after_dynamodb(
        self, model: Any, parsed: Mapping[str, Any], context: Any, **_: Any
    ) -> None:
        seen = (context or {}).get("quotagov_cost")
        if seen is None:
            return
        params = seen["params"]
        factor = 1.0 if params.get("ConsistentRead") else 0.5
        read = "dynamodb.read_unit"
        if model.name == "GetItem":
            size = _size(parsed.get("Item"))
            self._add_units(read, factor * max(1, math.ceil(size / 4096)))
        elif model.name in ("Query", "Scan"):
            size = sum(_size(item) for item in parsed.get("Items", []))
            self._add_units(read, factor * max(1, math.ceil(size / 4096)))
        elif model.name == "BatchGetItem":
            for items in parsed.get("Responses", {}).values():
                for item in items:
                    self._add_units(read, factor * max(1, math.ceil(_size(item) / 4096)))
        elif model.name == "TransactGetItems":
            for response in parsed.get("Responses", []):
                size = _size(response.get("Item"))
                self._add_units(read, 2 * max(1, math.ceil(size / 4096)))


def _policy_with_room(source: Path, escalations: int) -> Path:
    """A copy of the example policy whose teams may escalate ``escalations`` times a week."""
    policy = yaml.safe_load(source.read_text())
    for team in policy["teams"].values():
        if "escalationBudget" in team:
            team["escalationBudget"]["count"] = max(escalations, 1)
    path = Path(tempfile.mkdtemp(prefix="quotagov-cost-")) / "policy.yaml"
    path.write_text(yaml.safe_dump(policy, sort_keys=False))
    return path


#: The workload's mix: (share of submissions, principal, team, class, quota share).
def _mix() -> list[tuple[float, str, str, str, str]]:
    story = _local("demo_story")
    ALICE, DAVE, FRANK = story.ALICE, story.DAVE, story.FRANK

    bob = ALICE.replace("/alice", "/bob")
    return [
        (0.35, ALICE, "research", "exploratory", "background"),
        (0.25, bob, "research", "exploratory", "background"),
        (0.25, DAVE, "applied", "scheduled", "medium"),
        (0.15, FRANK, "release", "release", "reserved"),
    ]


def run_workload(jobs: int, escalate_every: int) -> dict[str, Any]:
    """Run the workload on a fresh local runtime; returns the counts (see the module doc),
    split into ``event`` (what the workload set off) and ``schedule`` (scheduled rules),
    plus the run's ``jobs``, ``virtualHours`` and ``outcomes``."""
    DemoDriver = _local("demo_driver").DemoDriver
    APPROVER = _local("demo_story").APPROVER
    runtime_module = _local("runtime")
    LocalRuntime, RuntimeOptions = runtime_module.LocalRuntime, runtime_module.RuntimeOptions
    DEFAULT_POLICY = runtime_module.DEFAULT_POLICY

    escalations_wanted = jobs // escalate_every if escalate_every else 0
    options = RuntimeOptions(
        policy=_policy_with_room(DEFAULT_POLICY, escalations_wanted + 1),
        extra_env={"POWERTOOLS_LOG_LEVEL": "ERROR"},
    )
    mix = _mix()
    outcome: Counter[str] = Counter()
    buckets = ("event", "schedule")
    cpu: dict[str, defaultdict[str, float]] = {b: defaultdict(float) for b in buckets}
    latency: dict[str, defaultdict[str, float]] = {b: defaultdict(float) for b in buckets}
    invocations: dict[str, Counter[str]] = {b: Counter() for b in buckets}
    triggers: dict[str, Counter[str]] = {b: Counter() for b in buckets}
    batch_calls: dict[str, Counter[str]] = {b: Counter() for b in buckets}
    slack_calls: dict[str, Counter[str]] = {b: Counter() for b in buckets}
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), LocalRuntime(options) as runtime:
        invoker = runtime._invoker
        meter = CostMeter(invoker.current_function)
        import boto3

        assert boto3.DEFAULT_SESSION is not None
        meter.register(boto3.DEFAULT_SESSION)
        invoke = invoker.invoke

        def timed(function: str, event: dict[str, Any], trigger: str = "invoke") -> Any:
            bucket = "schedule" if trigger.startswith("schedule") else "event"
            meter.bucket = bucket
            before = meter.per_service.copy()
            slack_before = len(runtime.slack.calls)
            actions_before = len(runtime.action_log.calls)
            cpu_before = time.process_time()
            record = invoke(function, event, trigger)
            cpu[bucket][function] += time.process_time() - cpu_before
            invocations[bucket][function] += 1
            triggers[bucket][trigger.split(" ")[0]] += 1
            for call in runtime.slack.calls[slack_before:]:
                slack_calls[bucket][call.method] += 1
                latency[bucket][function] += LATENCY_SECONDS["slack"]
            for action in runtime.action_log.calls[actions_before:]:
                if action.action.startswith("batch:"):
                    batch_calls[bucket][action.action] += 1
                    latency[bucket][function] += LATENCY_SECONDS["batch"]
            for service, count in (meter.per_service - before).items():
                latency[bucket][function] += count * LATENCY_SECONDS.get(service, 0.02)
            return record

        invoker.invoke = timed  # type: ignore[method-assign]
        driver = DemoDriver(runtime)
        t0 = runtime.clock.now()
        gap = 90  # seconds between submissions, with jobs of 60-300 s on three instances
        weights = [share for share, *_ in mix]
        for index in range(jobs):
            escalate = bool(escalate_every) and index % escalate_every == escalate_every - 1
            # the escalated jobs are research's (alice; erin approves, 'high' needs approval)
            choice = 0 if escalate else _pick(index, weights)
            _, principal, team, workload_class, share = mix[choice]
            name = f"cost-{index:05d}"
            response = driver.submit(
                principal,
                name,
                team=team,
                workload_class=workload_class,
                share=share,
                run_seconds=60 + (index * 37) % 240,
                checkpoint_interval=60 if workload_class == "exploratory" else None,
            )
            outcome[f"submission {response.status}"] += 1
            if escalate:
                outcome[_escalate(runtime, driver, name, principal, APPROVER)] += 1
            runtime.advance(gap)
        for _ in range(48):  # every job to a final state, at most four more hours
            if not _unfinished(driver):
                break
            runtime.advance(300)
        outcome[f"jobs not final at the end: {len(_unfinished(driver))}"] += 1
        runtime.publish_digests(force=True)
        outcome["audit verify intact" if runtime.audit_verify() else "audit verify BROKEN"] += 1
        memory = {name: spec.memory_mb for name, spec in runtime.functions.items()}
        virtual_hours = (runtime.clock.now() - t0) / 3600
    figures: dict[str, Any] = {
        "jobs": jobs,
        "escalateEvery": escalate_every,
        "virtualHours": round(virtual_hours, 2),
        "outcomes": dict(outcome),
        "wallSeconds": round(time.perf_counter() - started, 1),
    }
    for bucket in buckets:
        calls = {
            f"{service}:{op}": n
            for (b, service, op), n in sorted(meter.calls.items())
            if b == bucket
        }
        calls.update(batch_calls[bucket])
        figures[bucket] = {
            "invocations": dict(sorted(invocations[bucket].items())),
            "gbSeconds": sum(
                (cpu[bucket][name] + latency[bucket][name]) * memory.get(name, 512) / 1024
                for name in invocations[bucket]
            ),
            "calls": dict(sorted(calls.items())),
            "units": {unit: n for (b, unit), n in meter.units.items() if b == bucket},
            "customEvents": meter.events[bucket],
            "apiRequests": triggers[bucket]["api"],
            "sqsInvocations": triggers[bucket]["sqs"],
            "slackCalls": dict(slack_calls[bucket]),
            "unitsByFunction": {
                f"{function} {unit}": round(n, 2)
                for (b, function, unit), n in sorted(meter.units_by_function.items())
                if b == bucket
            },
            "callsByFunction": {
                f"{function} {call}": n
                for (b, function, call), n in sorted(meter.by_function.items())
                if b == bucket
            },
        }
    return figures


def _unfinished(driver: Any) -> list[str]:
    """Names of the submitted jobs whose latest published Batch status is not final."""
    latest: dict[str, str] = {}
    for detail in driver.state_events():
        latest[detail["jobName"]] = detail["status"]
    return [
        name
        for name, entry in driver.submissions.items()
        if entry.get("httpStatus") == 202 and latest.get(name) not in ("SUCCEEDED", "FAILED")
    ]


def _pick(index: int, weights: list[float]) -> int:
    """The mix entry of submission ``index``: a fixed, evenly spread pattern (no randomness)."""
    position = (index * 0.6180339887) % 1.0
    total = 0.0
    for choice, weight in enumerate(weights):
        total += weight
        if position < total:
            return choice
    return len(weights) - 1


def _escalate(runtime: Any, driver: Any, name: str, principal: str, approver: str) -> str:
    """Escalate ``name`` to ``high`` and approve it in Slack (confirming once if asked)."""
    entry = driver.submissions[name]
    if entry.get("submissionId") is None:
        return "escalation skipped (not submitted)"
    response = runtime.api(
        "POST",
        f"/jobs/{entry['submissionId']}/escalations",
        principal=principal,
        body={"level": "high", "reason": "a deadline this week"},
    )
    answer = response.json() or {}
    where = answer.get("message")
    if response.status != 201 or not isinstance(where, dict):
        return f"escalation {response.status}"
    for _ in range(3):
        message = driver.slack_message(str(where.get("channel")), str(where.get("ts")))
        if message is None:
            return "escalation without a Slack message"
        try:
            driver.click(approver, message, "escalation_approve")
        except AssertionError:
            break  # no button left: decided
        runtime.pump()
        stored = runtime.stored_escalation(str(answer.get("escalationId")))
        if stored.get("status") != "PENDING":
            return f"escalation {stored.get('status')}"
    return "escalation left PENDING"


def dollars(figures: Mapping[str, Any]) -> dict[str, float]:
    """USD by service of one bucket of :func:`run_workload`'s figures, at :data:`PRICES`."""
    units: Mapping[str, float] = figures["units"]
    return {
        "lambda": sum(figures["invocations"].values()) * PRICES["lambda.request"]
        + figures["gbSeconds"] * PRICES["lambda.gb_second.arm64"],
        "dynamodb": units.get("dynamodb.write_unit", 0) * PRICES["dynamodb.write_unit"]
        + units.get("dynamodb.read_unit", 0) * PRICES["dynamodb.read_unit"],
        "sqs": _requests(figures, "sqs") * PRICES["sqs.request"],
        "events": figures["customEvents"] * PRICES["events.custom_event"],
        "kms": _requests(figures, "kms", exclude=_KMS_ASYMMETRIC) * PRICES["kms.request"]
        + _requests(figures, "kms", only=_KMS_ASYMMETRIC) * PRICES["kms.request.asymmetric"],
        "s3": _requests(figures, "s3", exclude=_S3_GET) * PRICES["s3.put_list"]
        + _requests(figures, "s3", only=_S3_GET) * PRICES["s3.get"],
        "secretsmanager": _requests(figures, "secretsmanager") * PRICES["secretsmanager.request"],
        "apigateway": figures["apiRequests"] * PRICES["apigateway.rest_request"],
    }


def _requests(
    figures: Mapping[str, Any],
    service: str,
    *,
    only: set[str] | None = None,
    exclude: set[str] | None = None,
) -> int:
    """Requests to ``service`` in one bucket (SQS: plus the event source mapping's receive
    and delete per SQS-triggered invocation)."""
    total = 0
    for key, n in figures["calls"].items():
        prefix, _, operation = key.partition(":")
        if prefix != service or (only is not None and operation not in only):
            continue
        if exclude is not None and operation in exclude:
            continue
        total += n
    if service == "sqs" and only is None:
        total += 2 * figures["sqsInvocations"]
    return int(total)


def headline(figures: Mapping[str, Any], divisor: float) -> dict[str, float]:
    """One bucket's figures divided by ``divisor`` (jobs, or virtual hours)."""
    units: Mapping[str, float] = figures["units"]
    return {
        "lambda invocations": sum(figures["invocations"].values()) / divisor,
        "lambda GB-seconds (modelled)": figures["gbSeconds"] / divisor,
        "dynamodb requests": _requests(figures, "dynamodb") / divisor,
        "dynamodb write request units": units.get("dynamodb.write_unit", 0) / divisor,
        "dynamodb read request units": units.get("dynamodb.read_unit", 0) / divisor,
        "sqs requests (with the ESM's receive+delete)": _requests(figures, "sqs") / divisor,
        "eventbridge custom events": figures["customEvents"] / divisor,
        "kms requests": _requests(figures, "kms") / divisor,
        "s3 requests": _requests(figures, "s3") / divisor,
        "secrets manager requests": _requests(figures, "secretsmanager") / divisor,
        "ssm requests": _requests(figures, "ssm") / divisor,
        "batch requests (no charge)": _requests(figures, "batch") / divisor,
        "api gateway requests": figures["apiRequests"] / divisor,
        "slack web api calls": sum(figures["slackCalls"].values()) / divisor,
    }


def _print(label: str, figures: Mapping[str, Any]) -> None:
    jobs = max(1, figures["jobs"])
    hours = max(figures["virtualHours"], 1e-9)
    print(f"== {label}: {figures['jobs']} jobs, one escalation in {figures['escalateEvery']},")
    print(f"   {figures['virtualHours']} virtual hours, {figures['wallSeconds']} s wall")
    print(f"   outcomes: {figures['outcomes']}")
    per_job = headline(figures["event"], jobs)
    per_hour = headline(figures["schedule"], hours)
    print(f"   {'':<46} {'per job':>10} {'schedules/h':>12}")
    for name, value in per_job.items():
        print(f"   {name:<46} {value:10.3f} {per_hour[name]:12.3f}")
    job_usd = dollars(figures["event"])
    hour_usd = dollars(figures["schedule"])
    print(f"   {'USD per 1,000 jobs / per 1,000 hours':<46} {'':>10}")
    for name in job_usd:
        print(
            f"     {name:<44} {1000 * job_usd[name] / jobs:10.5f}"
            f" {1000 * hour_usd[name] / hours:12.5f}"
        )
    print(
        f"     {'total':<44} {1000 * sum(job_usd.values()) / jobs:10.5f}"
        f" {1000 * sum(hour_usd.values()) / hours:12.5f}"
    )
    print("   invocations per job (workload) and per hour (schedules), by function:")
    names = sorted({*figures["event"]["invocations"], *figures["schedule"]["invocations"]})
    for name in names:
        event = figures["event"]["invocations"].get(name, 0) / jobs
        scheduled = figures["schedule"]["invocations"].get(name, 0) / hours
        print(f"     {name:<44} {event:10.3f} {scheduled:12.3f}")


def _python_path(checkout: Path) -> str:
    """``PYTHONPATH`` for a checkout: its ``src`` and, when it has one, its ``tools``."""
    paths = [checkout / "src", checkout / "tools"]
    return os.pathsep.join(str(path) for path in paths if path.is_dir())


def main() -> None:
    """Measure, print; with ``--compare`` the other checkout runs the same in a subprocess."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--escalate-every", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="print the raw counts as JSON")
    parser.add_argument("--compare", type=Path, help="another checkout (its root directory)")
    args = parser.parse_args()
    figures = run_workload(args.jobs, args.escalate_every)
    if args.json:
        print(json.dumps(figures, indent=2, sort_keys=True))
        return
    if args.compare is not None:
        other = subprocess.run(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--jobs",
                str(args.jobs),
                "--escalate-every",
                str(args.escalate_every),
                "--json",
            ],
            env={**os.environ, "PYTHONPATH": _python_path(args.compare.resolve())},
            cwd=args.compare.resolve(),
            capture_output=True,
            text=True,
            check=True,
        )
        _print(f"compared: {args.compare}", json.loads(other.stdout))
    _print("this checkout", figures)


if __name__ == "__main__":
    main()
