"""``quotagov audit verify`` and ``quotagov audit show``: the audit log for a person.

``verify`` walks every hash chain of the audit table (or the ``--queue`` ones) and
exits 0 when all are intact, 1 naming the first broken record of each broken chain
and each chain whose registry item (``pk=CHAINS``) was deleted. The chains are found
from the registry and by scanning the table for their records, so ``verify`` needs
``dynamodb:Scan`` on the table besides ``Query``/``GetItem``. From the table alone it
cannot see the newest record(s) of a chain deleted together with their dedup markers
(see :mod:`quotagov.governance.audit.review`): each intact chain's line ends with
``anchor CHAIN=SEQ:HASH``, its head; keep that outside the table and pass it back
with ``--anchor CHAIN=SEQ:HASH`` (repeatable) to have that record checked too.
With the digest bucket (``--digest-bucket``/``AUDIT_DIGEST_BUCKET``, stack output
``AuditDigestBucketName``) and the digest public key (``--public-key FILE`` or
``--digest-key``/``AUDIT_DIGEST_KEY`` for one ``kms:GetPublicKey``), every signed digest
is checked and the table must still hold what each covers; with ``--seal-key``
(``AUDIT_SEAL_KEY``, ``kms:VerifyMac``) the record seals are checked: one ``VerifyMac``
for an intact chain (its last seal proves every record before it), a bisection over
the seals to find the first run they no longer prove when it fails. Both
are what catch a writer of the table who re-hashes, truncates or wipes a chain (issue
14); without them ``verify`` prints a ``WARNING`` line on stderr saying what it could not check.
``show [--share NAME] [--since T] [--queue Q]`` prints the history with each
record's difference and findings. The table comes from ``--table`` or ``AUDIT_TABLE``
(the stack output ``AuditTableName``), the Region from ``--region`` or the usual boto3
settings (``AWS_REGION``, the profile). Exit 2, with one line on stderr, when the
table cannot be read (no table named, no Region or credentials, a failing AWS call).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from botocore.exceptions import BotoCoreError, ClientError

from quotagov.governance.audit.review import describe_record, history, parse_time, verify
from quotagov.wiring import Services
from quotagov_tools.commands.environment import options_as_environment


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``audit`` with its ``verify`` and ``show`` subcommands."""
    parser = subparsers.add_parser("audit", help="verify and show the audit log")
    actions = parser.add_subparsers(dest="audit_command", metavar="ACTION")
    actions.required = True

    check = actions.add_parser("verify", help="check every hash chain; exit 1 on a break")
    check.add_argument("--queue", action="append", help="only this job queue (repeatable)")
    check.add_argument(
        "--anchor",
        action="append",
        metavar="CHAIN=SEQ:HASH",
        help="a head printed by an earlier verify, kept elsewhere: record SEQ of CHAIN "
        "must still have HASH (repeatable)",
    )
    check.add_argument(
        "--digest-bucket", help="the signed digests' bucket (default: $AUDIT_DIGEST_BUCKET)"
    )
    check.add_argument(
        "--digest-key", help="KMS key id/ARN signing the digests (default: $AUDIT_DIGEST_KEY)"
    )
    check.add_argument(
        "--public-key",
        metavar="FILE",
        help="the digest public key as PEM/DER, instead of kms:GetPublicKey on --digest-key",
    )
    check.add_argument(
        "--seal-key", help="KMS HMAC key id/ARN of the record seals (default: $AUDIT_SEAL_KEY)"
    )
    _table_options(check)
    check.set_defaults(func=_guarded(run_verify))

    show = actions.add_parser("show", help="print the history with differences")
    show.add_argument("--share", help="only records about this quota share and its jobs")
    show.add_argument("--since", help="only records at or after T (ISO-8601 or epoch seconds)")
    show.add_argument("--queue", action="append", help="only this job queue (repeatable)")
    _table_options(show)
    show.set_defaults(func=_guarded(run_show))


def _table_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--table", help="the audit table (default: $AUDIT_TABLE)")
    parser.add_argument("--region", help="its AWS Region (default: boto3's, e.g. $AWS_REGION)")


#: ``verify`` options that set the audit settings (see :class:`quotagov.settings.Settings`).
_KEY_OPTIONS = {
    "digest_bucket": "AUDIT_DIGEST_BUCKET",
    "digest_key": "AUDIT_DIGEST_KEY",
    "public_key": "AUDIT_DIGEST_PUBLIC_KEY",
    "seal_key": "AUDIT_SEAL_KEY",
}


def _guarded(
    run: Callable[[argparse.Namespace], int],
) -> Callable[[argparse.Namespace], int]:
    """``run`` with the table options applied for its duration
    (:func:`~quotagov_tools.commands.environment.options_as_environment`) and AWS/setting
    failures turned into exit 2."""

    def guarded(args: argparse.Namespace) -> int:
        values = {
            "AUDIT_TABLE": args.table,
            "AWS_REGION": args.region,
            "AWS_DEFAULT_REGION": args.region,
            **{variable: getattr(args, option, None) for option, variable in _KEY_OPTIONS.items()},
        }
        with options_as_environment(values):
            try:
                return run(args)
            except (BotoCoreError, ClientError, RuntimeError) as exc:
                print(f"quotagov audit {args.audit_command}: {exc}", file=sys.stderr)
                return 2

    return guarded


def parse_anchor(text: str) -> tuple[str, tuple[int, str]]:
    """``CHAIN=SEQ:HASH`` (SEQ a positive integer, HASH 64 hex digits) as
    ``(chain, (seq, hash))``.

    Raises:
        ValueError: naming the expected form.
    """
    chain, _, rest = text.partition("=")
    seq, _, digest = rest.partition(":")
    if (
        not chain
        or not seq.isdigit()
        or int(seq) < 1
        or len(digest) != 64
        or any(c not in "0123456789abcdef" for c in digest)
    ):
        raise ValueError(f"--anchor: {text!r} is not CHAIN=SEQ:HASH (HASH: 64 hex digits)")
    return chain, (int(seq), digest)


def run_verify(args: argparse.Namespace) -> int:
    """Verify the chains; print one line per intact chain and one per fault of a broken
    one (its first broken record, its missing registry item); 0 when all are intact, else 1;
    2 for a malformed ``--anchor``.

    Raises:
        botocore.exceptions.ClientError: the table cannot be read (exit 2 via the guard).
    """
    try:
        anchors = dict(parse_anchor(text) for text in args.anchor or [])
    except ValueError as exc:
        print(f"quotagov audit verify: {exc}", file=sys.stderr)
        return 2
    built = Services()
    digests = built.audit_digest_source()
    sealer = built.audit_sealer
    reports = verify(built.audit_chains, args.queue, anchors, digests=digests, sealer=sealer)
    if digests is None:
        print(
            "WARNING: no digest bucket given (--digest-bucket): a re-hashed, truncated or "
            "wiped chain cannot be told from an intact one",
            file=sys.stderr,
        )
    if sealer is None:
        print(
            "WARNING: no seal key given (--seal-key): records appended since the last "
            "digest are not checked against forgery",
            file=sys.stderr,
        )
    if not reports:
        print("no audit chains found")
        return 0
    broken = 0
    for report in reports:
        if report.intact:
            anchor = (
                f"; anchor {report.chain}={report.head.seq}:{report.head.hash}"
                if report.head
                else ""
            )
            checked = ""
            if report.digests is not None:
                checked += (
                    f"; {report.digests} signed digests verified, records 1-"
                    f"{report.digested_to} as digested"
                )
            if report.seal_checks is not None:
                checked += (
                    f"; seals hold ({report.seal_checks} KMS checks, "
                    f"{report.sealed_runs} sealed runs)"
                )
            print(f"chain {report.chain}: {report.records} records, intact{checked}{anchor}")
            continue
        broken += 1
        if report.first_break is not None:
            print(f"BROKEN {report.first_break}")
        if not report.registered:
            print(
                f"BROKEN chain {report.chain}: not in the chain registry (item pk=CHAINS, "
                f"sk={report.chain} deleted) but its items are in the table"
            )
    return 1 if broken else 0


def run_show(args: argparse.Namespace) -> int:
    """Print matching records, oldest first per chain; 2 for a bad ``--since``."""
    try:
        since = parse_time(args.since) if args.since else None
    except ValueError as exc:
        print(f"quotagov audit show: {exc}", file=sys.stderr)
        return 2
    store = Services().audit_chains
    count = 0
    for record in history(store, share=args.share, since=since, chains=args.queue):
        print(describe_record(record))
        count += 1
    if count == 0:
        print("no audit records match")
    return 0
