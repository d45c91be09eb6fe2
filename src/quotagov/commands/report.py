"""``quotagov report escalations``: escalations per team and requester, preemptions and
lost GPU-hours per team, from a deployed stack's tables.

``--since T`` (ISO-8601 or epoch seconds; required) and ``--until T`` (default now)
bound the window; ``--json`` prints the report as one JSON document
(:func:`quotagov.governance.reports.escalations.escalation_report`). The tables come
from ``--escalations-table``/``--jobs-table`` or ``ESCALATIONS_TABLE``/``JOBS_TABLE``
(the stack outputs ``EscalationsTableName``/``JobsTableName``), the policy (teams and
their budgets) from ``--policy-file`` or ``--policy-parameter`` (``POLICY_PARAMETER``,
the stack output ``PolicyParameterName``), the Region from ``--region`` or boto3's
settings. Reads need ``dynamodb:Query`` on the escalations table's ``byStatus`` index
and the jobs table's ``byTeam`` index, and ``ssm:GetParameter`` for the policy.

Exit 0 with the report; 2, with one line on stderr, when a table or the policy cannot
be read or an option is wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``report`` with its ``escalations`` subcommand."""
    parser = subparsers.add_parser("report", help="reports for operators")
    kinds = parser.add_subparsers(dest="report_command", metavar="REPORT")
    kinds.required = True
    escalations = kinds.add_parser(
        "escalations",
        help="escalations per team and requester; preemptions and lost GPU-hours per team",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    escalations.add_argument("--since", required=True, help="window start (ISO-8601 or epoch s)")
    escalations.add_argument("--until", help="window end (default: now)")
    escalations.add_argument("--json", action="store_true", help="print one JSON document")
    escalations.add_argument("--escalations-table", help="default: $ESCALATIONS_TABLE")
    escalations.add_argument("--jobs-table", help="default: $JOBS_TABLE")
    escalations.add_argument("--policy-file", help="the governance policy (YAML/JSON)")
    escalations.add_argument(
        "--policy-parameter", help="SSM parameter (default: $POLICY_PARAMETER)"
    )
    escalations.add_argument("--region", help="AWS Region (default: boto3's, e.g. $AWS_REGION)")
    escalations.set_defaults(func=run_escalations)


def run_escalations(args: argparse.Namespace) -> int:
    """Read the tables, print the report; 0, or 2 when something cannot be read."""
    from quotagov.commands.environment import options_as_environment
    from quotagov.governance.audit.review import parse_time
    from quotagov.governance.reports.escalations import escalation_report, render

    values = {
        "ESCALATIONS_TABLE": args.escalations_table,
        "JOBS_TABLE": args.jobs_table,
        "POLICY_FILE": args.policy_file,
        "POLICY_PARAMETER": args.policy_parameter,
        "AWS_REGION": args.region,
        "AWS_DEFAULT_REGION": args.region,
    }
    try:
        since = parse_time(args.since)
        until = parse_time(args.until) if args.until else time.time()
        with options_as_environment(values):
            report = escalation_report(*_read(), since=since, until=until)
    except ValueError as exc:
        print(f"quotagov report escalations: {exc}", file=sys.stderr)
        return 2
    except (BotoCoreError, ClientError, RuntimeError) as exc:
        print(f"quotagov report escalations: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print("\n".join(render(report)))
    return 0


def _read() -> tuple[list[Any], list[Any], Any]:
    """Every escalation (by status), every team's job records, and the policy."""
    from quotagov.governance.escalation_records import EscalationStatus
    from quotagov.wiring import Services

    svc = Services()
    policy = svc.policy
    table = svc.escalations_table
    escalations = [e for status in EscalationStatus for e in table.with_status(status)]
    jobs: list[Any] = []
    for team in policy.teams:
        start = None
        while True:
            page, start = svc.jobs.list_team(team, limit=100, start=start)
            jobs.extend(page)
            if start is None:
                break
    return escalations, jobs, policy
