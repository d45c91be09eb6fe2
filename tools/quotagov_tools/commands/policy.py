"""``quotagov policy validate FILE``: check a governance policy, listing every fault with its path.

Exit codes: 0 when the policy is valid, 1 when it is not (every fault listed), 2 when
the file cannot be read (missing, unreadable, not UTF-8 text), as for ``simulate`` and
``whatif``. The rules are those of :mod:`quotagov.policy.validation` (AWS Batch service
quotas page for the limits, the design's governance rules).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add ``policy`` (with its ``validate`` subcommand) to the ``quotagov`` parser."""
    parser = subparsers.add_parser("policy", help="work with governance policy files")
    actions = parser.add_subparsers(dest="policy_command", metavar="ACTION")
    actions.required = True
    validate = actions.add_parser(
        "validate",
        help="check a policy file; exit 0 when valid, 1 listing every fault, 2 unreadable",
    )
    validate.add_argument("file", type=Path, help="the policy YAML (or JSON) file")
    validate.set_defaults(func=validate_command)


def validate_command(args: argparse.Namespace) -> int:
    """Validate ``args.file``; print ``OK`` and a summary, or every fault (one per line)."""
    from quotagov.policy.validation import PolicyError, load_policy

    path: Path = args.file
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"{path}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as exc:
        print(f"{path}: cannot read: not UTF-8 text ({exc.reason})", file=sys.stderr)
        return 2
    try:
        policy = load_policy(text)
    except PolicyError as exc:
        print(f"{path}: invalid policy, {len(exc.faults)} fault(s):", file=sys.stderr)
        for fault in exc.faults:
            print(f"  {fault}", file=sys.stderr)
        return 1
    print(
        f"{path}: OK ({len(policy.quotaShares)} quota shares, "
        f"{len(policy.priorityLevels)} priority levels, "
        f"{len(policy.workloadClasses)} workload classes, {len(policy.teams)} teams)"
    )
    return 0
