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
be read (no Region or credentials, a failing DynamoDB or SSM call: Powertools Parameters
reports SSM failures as ``GetParameterError``) or an option is wrong.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from quotagov.settings import Settings


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
    from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError

    from quotagov.governance.audit.review import parse_time
    from quotagov.governance.reports.escalations import escalation_report, render
    from quotagov_tools.commands.environment import options_as_environment

    settings = _settings(args)
    region = {"AWS_REGION": args.region, "AWS_DEFAULT_REGION": args.region}
    try:
        since = parse_time(args.since)
        until = parse_time(args.until) if args.until else time.time()
        with options_as_environment(region):
            report = escalation_report(*_read(settings), since=since, until=until)
    except ValueError as exc:
        print(f"quotagov report escalations: {exc}", file=sys.stderr)
        return 2
    except GetParameterError as exc:
        print(
            f"quotagov report escalations: policy parameter {settings.policy_parameter}: "
            f"cannot read: {exc}",
            file=sys.stderr,
        )
        return 2
    except (BotoCoreError, ClientError, RuntimeError) as exc:
        print(f"quotagov report escalations: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print("\n".join(render(report)))
    return 0


def _settings(args: argparse.Namespace) -> Settings:
    """The environment's settings with the options' names in their place.

    An option wins over its environment variable; ``--policy-parameter`` alone also
    sets aside a ``POLICY_FILE`` of the environment (which would otherwise win).
    """
    changes = {
        name: getattr(args, name)
        for name in ("escalations_table", "jobs_table", "policy_file", "policy_parameter")
        if getattr(args, name)
    }
    if args.policy_parameter and not args.policy_file:
        changes["policy_file"] = ""
    return dataclasses.replace(Settings.from_env(), **changes)


def _read(settings: Settings) -> tuple[list[Any], list[Any], Any]:
    """Every escalation (by status), every team's job records, and the policy."""
    from quotagov.governance.model.escalation import EscalationStatus
    from quotagov.wiring import Services

    svc = Services(settings)
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
