"""The ``quotagov`` command: demo, serve, invoke, simulate, whatif, history, audit, policy,
redrive, jobs,
slack-manifest.

Each subcommand lives in its own module under ``quotagov_tools.commands`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a callable
``(argparse.Namespace) -> int`` (the exit code).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

#: reST/Sphinx markup of the docstrings the commands use as their help: ``literal``,
#: :role:`~dotted.target` (``~`` keeps the last part), :role:`Title <target>`.
_ROLE = re.compile(r":[a-z]+:`(~?)([^`<]*?)(?:\s*<[^>]*>)?`")
_LITERAL = re.compile(r"``(.+?)``", re.DOTALL)


def plain_text(text: str) -> str:
    """``text`` with the reST markup of docstrings taken out, for a terminal.

    ``"``--json`` prints (see :mod:`quotagov_tools.local.demo_story`)"`` ->
    ``"--json prints (see quotagov_tools.local.demo_story)"``; ``:func:`~a.b.c``` -> ``c``.
    """

    def role(match: re.Match[str]) -> str:
        tilde, target = match.groups()
        target = target.strip()
        return target.rsplit(".", 1)[-1] if tilde else target

    return _LITERAL.sub(r"\1", _ROLE.sub(role, text)).replace("::\n", ":\n")


class PlainHelpFormatter(argparse.HelpFormatter):
    """Help without docstring markup (:func:`plain_text`); a description written on
    several lines (a module docstring) keeps its lines, a one-line one is wrapped."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        text = plain_text(text)
        if "\n" in text.strip():
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)

    def _expand_help(self, action: argparse.Action) -> str:
        return plain_text(super()._expand_help(action))


class CommandParser(argparse.ArgumentParser):
    """The parser of ``quotagov`` and of each subcommand (``add_subparsers`` makes its
    subparsers of the parent's class): help always through :class:`PlainHelpFormatter`,
    whatever formatter a command names."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["formatter_class"] = PlainHelpFormatter
        super().__init__(*args, **kwargs)


#: The exit code when standard output's reader closed the pipe: 128 + ``SIGPIPE`` (13),
#: what a shell reports for a program that ``SIGPIPE`` ended.
EXIT_BROKEN_PIPE = 141

#: Modules under ``quotagov_tools.commands`` that provide subcommands, in help order.
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
    "report",
    "redrive",
    "jobs",
    "slack_manifest",
)


def package_version() -> str:
    """The installed distribution's version (``0.1.0``), from its metadata; ``unknown``
    when quotagov runs from a source tree that was never installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("quotagov")
    except PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every registered subcommand (and ``--version``)."""
    parser = CommandParser(
        prog="quotagov",
        description="Governance for AWS Batch quota management of SageMaker Training jobs.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"quotagov {package_version()}",
        help="print the installed version and exit",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"quotagov_tools.commands.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (2 for usage errors).

    A command whose extra is not installed (:data:`quotagov_tools.extras.COMMAND_EXTRAS`)
    does not run: one line on stderr names the extra to install, and the exit code is 2.

    When the reader of standard output goes away early (``quotagov simulate ... | head``)
    the command stops quietly with :data:`EXIT_BROKEN_PIPE`, as a program killed by
    ``SIGPIPE`` would, instead of a ``BrokenPipeError`` traceback.
    """
    from quotagov_tools.extras import missing_extra, refusal

    parser = build_parser()
    args = parser.parse_args(argv)
    extra = missing_extra(args.command)
    if extra is not None:
        print(refusal(args.command, extra), file=sys.stderr)
        return 2
    try:
        code: int = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python's own advice (the signal module's notes on SIGPIPE): point stdout at
        # devnull so that the interpreter's last flush at exit cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
