"""``quotagov redrive --queue failed-events|submissions-dlq``: replay parked messages.

What is replayed, how, and why it is safe: :mod:`quotagov.governance.redrive.replay`. The
queues, tables and functions come from the deployed stack (``--stack``, read with
CloudFormation ``DescribeStacks`` / ``ListStackResources``: outputs
``SubmissionDeadLetterQueueUrl``, ``SubmissionQueueUrl``, ``FailedEventsQueueUrl``,
``JobsTableName``, ``AuditQueueUrl``, ``GovernedJobQueueArn`` and the stack's
``AWS::Lambda::Function`` resources), or from the options that name them one by one.

Prints one line per message (``--json``: a JSON list) and a summary. Exit 0 when every
message was replayed or had nothing left to replay, 1 when some were refused or failed
again (they stay parked), 2 for a usage error or a failing AWS call (nothing done for
the message it concerned).

IAM for the operator: ``sqs:ReceiveMessage``/``DeleteMessage`` on the parked queue,
``sqs:SendMessage`` on the submission queue and on the audit queue,
``dynamodb:GetItem``/``UpdateItem`` on ``JobsTable`` (the queue and table policies
admit no one else than the stack's roles and its ``OperatorRoleArn`` parameter),
``lambda:InvokeFunction`` on the stack's functions (``failed-events``),
``cloudformation:DescribeStacks``/``ListStackResources`` (``--stack``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass, field

from botocore.exceptions import BotoCoreError, ClientError

from quotagov.governance.ports.parked import FunctionInvoker, ParkedQueueError

QUEUES = ("failed-events", "submissions-dlq")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``redrive``."""
    parser = subparsers.add_parser(
        "redrive",
        help="replay parked messages (failed events, submission DLQ): idempotent, audited",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--queue", required=True, choices=QUEUES, help="which parked queue")
    parser.add_argument("--stack", help="the deployed stack (reads its outputs)")
    parser.add_argument("--region", help="its AWS Region (default: boto3's, e.g. $AWS_REGION)")
    parser.add_argument("--max", type=int, default=100, help="at most this many messages")
    parser.add_argument("--dry-run", action="store_true", help="say what would happen only")
    parser.add_argument("--json", action="store_true", help="print the outcomes as JSON")
    named = parser.add_argument_group("without --stack")
    named.add_argument("--queue-url", help="the parked queue's URL")
    named.add_argument("--submission-queue-url", help="the submission queue's URL")
    named.add_argument("--jobs-table", help="JobsTable name")
    named.add_argument(
        "--audit-queue-url",
        help="AuditQueue URL: the records go to the one audit writer, which seals them",
    )
    named.add_argument("--job-queue", help="the governed job queue ARN (audit chain)")
    named.add_argument(
        "--function", action="append", default=[], help="a function ARN of the stack (repeatable)"
    )
    parser.set_defaults(func=run)


@dataclass
class Targets:
    """Where the command reads and writes."""

    parked_url: str
    submission_queue_url: str = ""
    jobs_table: str = ""
    audit_queue_url: str = ""
    job_queue: str = ""
    functions: frozenset[str] = field(default_factory=frozenset)


def _from_stack(stack: str, queue: str, region: str | None) -> Targets:
    import boto3

    cfn = boto3.client("cloudformation", region_name=region)
    [described] = cfn.describe_stacks(StackName=stack)["Stacks"]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}
    parts = described["StackId"].split(":")
    partition, stack_region, account = parts[1], parts[3], parts[4]
    functions = set()
    for page in cfn.get_paginator("list_stack_resources").paginate(StackName=stack):
        for resource in page["StackResourceSummaries"]:
            if resource["ResourceType"] == "AWS::Lambda::Function":
                name = resource["PhysicalResourceId"]
                functions.add(f"arn:{partition}:lambda:{stack_region}:{account}:function:{name}")
    key = "FailedEventsQueueUrl" if queue == "failed-events" else "SubmissionDeadLetterQueueUrl"
    if key not in outputs:
        raise KeyError(f"stack {stack} has no output {key}")
    return Targets(
        parked_url=outputs[key],
        submission_queue_url=outputs.get("SubmissionQueueUrl", ""),
        jobs_table=outputs.get("JobsTableName", ""),
        audit_queue_url=outputs.get("AuditQueueUrl", ""),
        job_queue=outputs.get("GovernedJobQueueArn", ""),
        functions=frozenset(functions),
    )


def _from_options(args: argparse.Namespace) -> Targets:
    if not args.queue_url:
        raise KeyError("give --stack, or --queue-url and the other names")
    return Targets(
        parked_url=args.queue_url,
        submission_queue_url=args.submission_queue_url or "",
        jobs_table=args.jobs_table or "",
        audit_queue_url=args.audit_queue_url or os.environ.get("AUDIT_QUEUE_URL", ""),
        job_queue=args.job_queue or "",
        functions=frozenset(args.function),
    )


def run(args: argparse.Namespace) -> int:
    """Replay; print the outcomes; return the exit code."""
    import boto3

    from quotagov import wiring
    from quotagov.adapters.sqs_parked import SqsParkedQueue
    from quotagov.governance.redrive.replay import Outcome, ParkedKind, RedriveDeps, redrive
    from quotagov.settings import Settings
    from quotagov_tools.commands.environment import options_as_environment

    if args.max < 1:
        print(f"quotagov redrive: --max {args.max}: must be at least 1", file=sys.stderr)
        return 2
    kind = ParkedKind(args.queue)
    try:
        targets = _from_stack(args.stack, args.queue, args.region) if args.stack else None
        targets = targets or _from_options(args)
        if kind is ParkedKind.SUBMISSIONS_DLQ and not (
            targets.jobs_table and targets.submission_queue_url
        ):
            raise KeyError("submissions-dlq needs --jobs-table and --submission-queue-url")
        if not targets.audit_queue_url:
            # Written to the table directly, a record would carry no seal, and the one
            # writer never seals records on top of an unsealed one (it could be forged):
            # the audit would stop. So the records go through the writer, always.
            raise KeyError(
                "no audit queue: give --audit-queue-url (the stack's AuditQueueUrl); "
                "redrive's records go to the one audit writer, which seals them"
            )
        with options_as_environment({"AWS_DEFAULT_REGION": args.region}):
            settings = Settings(
                jobs_table=targets.jobs_table,
                audit_queue_url=targets.audit_queue_url,
                submission_queue_url=targets.submission_queue_url,
                job_queue=targets.job_queue,
            )
            services = wiring.Services(settings)
            sqs = boto3.client("sqs", region_name=args.region)
            deps = RedriveDeps(
                parked=SqsParkedQueue(targets.parked_url, sqs, targets.submission_queue_url),
                audit=services.audit,
                clock=services.clock,
                job_queue=targets.job_queue or "quotagov",
                jobs=services.jobs if kind is ParkedKind.SUBMISSIONS_DLQ else None,
                queue=services.submission_queue if kind is ParkedKind.SUBMISSIONS_DLQ else None,
                invoker=_invoker(args.region) if kind is ParkedKind.FAILED_EVENTS else None,
                functions=targets.functions,
            )
            results = redrive(kind, deps, max_messages=args.max, dry_run=args.dry_run)
    except (KeyError, ValueError) as exc:
        print(f"quotagov redrive: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    except (ClientError, BotoCoreError, ParkedQueueError) as exc:
        print(f"quotagov redrive: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([r.to_dict() for r in results], indent=2))
    else:
        for r in results:
            print(f"{r.message_id}  {r.outcome}  {r.subject or '-'}: {r.detail}")
        counts = Counter(str(r.outcome) for r in results)
        summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
        print(f"{args.queue}: {len(results)} messages" + (f": {summary}" if summary else ""))
    stuck = {Outcome.REFUSED, Outcome.FAILED}
    return 1 if any(r.outcome in stuck for r in results) else 0


def _invoker(region: str | None) -> FunctionInvoker:
    """Lambda ``Invoke`` (RequestResponse) in ``region``."""
    import boto3

    from quotagov.adapters.lambda_invoker import LambdaInvoker

    return LambdaInvoker(boto3.client("lambda", region_name=region))
