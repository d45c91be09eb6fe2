"""``quotagov policy validate FILE`` and ``quotagov policy review OLD NEW``.

``validate`` checks a governance policy, listing every fault with its path. Exit codes:
0 when the policy is valid, 1 when it is not (every fault listed), 2 when the file
cannot be read (missing, unreadable, not UTF-8 text), as for ``simulate`` and
``whatif``. The rules are those of :mod:`quotagov.policy.validation` (AWS Batch service
quotas page for the limits, the design's governance rules).

``review`` writes ``review.md`` and ``review.json`` (:mod:`quotagov_tools.whatif.policy_review`)
into ``--out`` and prints ``review.md``. Exit codes: 0 done; 1 with ``--fail-on high``
when a high-risk finding is present (the review is still written); 2 for bad input
(an unreadable or invalid policy, a bad workload option: every fault, naming the file
and field).
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
    review = actions.add_parser(
        "review",
        help="review a policy change: governance diff, risk findings, what-if (review.md)",
        description="Compare two policy files in governance terms, list the risk findings "
        "the audit would raise for the change, and with --workload replay each workload "
        "under OLD and NEW.",
    )
    review.add_argument("old", type=Path, metavar="OLD", help="the policy in force")
    review.add_argument("new", type=Path, metavar="NEW", help="the proposed policy")
    review.add_argument(
        "--workload",
        action="append",
        default=[],
        metavar="FILE",
        help="a workload to replay under OLD and NEW (repeatable; the workload options "
        "below apply to each)",
    )
    review.add_argument(
        "--out",
        type=Path,
        default=Path("policy-review"),
        metavar="DIR",
        help="directory for review.md and review.json (default policy-review)",
    )
    review.add_argument(
        "--fail-on",
        choices=("high",),
        default=None,
        help="exit 1 when a finding of this severity is present",
    )
    review.add_argument(
        "--seeds",
        type=int,
        default=3,
        metavar="K",
        help="perturbed copies of each workload, for the noise marks (default 3)",
    )
    from quotagov_tools.commands.workload_options import add_workload_arguments

    add_workload_arguments(review, positional=False)
    review.set_defaults(func=review_command)


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


def _read_policy(path: Path, faults: list[str]) -> Any:
    from quotagov.policy.validation import PolicyError, load_policy

    try:
        return load_policy(path.read_text(encoding="utf-8"))
    except OSError as exc:
        faults.append(f"{path}: cannot read: {exc.strerror or exc}")
    except UnicodeDecodeError as exc:
        faults.append(f"{path}: cannot read: not UTF-8 text ({exc.reason})")
    except PolicyError as exc:
        faults += [f"{path}: {fault}" for fault in exc.faults]
    return None


def review_command(args: argparse.Namespace) -> int:
    """Review the change from ``args.old`` to ``args.new``; see the module docstring."""
    import json

    from quotagov.scheduler import InvalidConfigError
    from quotagov_tools.commands.workload_options import load_workload, loop_options
    from quotagov_tools.whatif import WhatIf, WhatIfError, run_whatif
    from quotagov_tools.whatif.mapping import parse_capacity
    from quotagov_tools.whatif.policy_review import markdown, review, whatif_section

    faults: list[str] = []
    old = _read_policy(args.old, faults)
    new = _read_policy(args.new, faults)
    if args.seeds < 1:
        faults.append(f"--seeds: {args.seeds} must be >= 1")
    if faults or old is None or new is None:
        return _review_fail(faults)
    sections = []
    try:
        capacity = parse_capacity(args.capacity) or None
        for workload_path in args.workload:
            one = argparse.Namespace(**{**vars(args), "workload": workload_path})
            workload = load_workload(one, (old, new))
            report, _ = run_whatif(
                WhatIf(
                    policies={"old": old, "new": new},
                    workload=workload,
                    capacity=capacity,
                    options=loop_options(args),
                    seeds=args.seeds,
                )
            )
            sections.append(whatif_section(str(workload_path), report))
    except (WhatIfError, InvalidConfigError) as exc:
        return _review_fail(list(getattr(exc, "faults", [str(exc)])))
    document = review(str(args.old), str(args.new), old, new, sections)
    text = markdown(document)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "review.json").write_text(json.dumps(document, indent=2, allow_nan=False) + "\n")
    (out / "review.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    print(f"\nWrote {out / 'review.md'}, {out / 'review.json'}")
    if args.fail_on == "high" and document["highFindings"]:
        print(
            f"quotagov policy review: {document['highFindings']} high-risk finding(s)",
            file=sys.stderr,
        )
        return 1
    return 0


def _review_fail(faults: list[str]) -> int:
    print(f"quotagov policy review: {len(faults)} problem(s):", file=sys.stderr)
    for fault in faults:
        print(f"  {fault}", file=sys.stderr)
    return 2
