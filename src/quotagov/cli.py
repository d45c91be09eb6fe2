"""The ``quotagov`` command: demo, serve, invoke, simulate, whatif, history, audit, policy.

Each subcommand lives in its own module under ``quotagov.commands`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a callable
``(argparse.Namespace) -> int`` (the exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: Modules under ``quotagov.commands`` that provide subcommands, in help order.
COMMAND_MODULES: tuple[str, ...] = (
    "policy",
    "simulate",
    "whatif",
    "history",
    "demo",
    "serve",
    "slack_click",
    "invoke",
    "audit",
)


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="quotagov",
        description="Governance for AWS Batch quota management of SageMaker Training jobs.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"quotagov.commands.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (2 for usage errors)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
