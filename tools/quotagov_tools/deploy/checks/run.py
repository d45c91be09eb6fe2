"""Every rule on one template, and the command line ``python -m quotagov_tools.deploy.checks``.

:func:`check_template` runs the ``handler``, ``event``, ``iam``, ``operations`` and ``seal`` rules
(the package documentation of :mod:`quotagov_tools.deploy.checks` describes them);
:func:`main` prints the
findings and a verdict line, for ``make lint-template`` users and CI.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

from quotagov_tools.deploy.checks.findings import Finding
from quotagov_tools.deploy.checks.handlers import check_handlers
from quotagov_tools.deploy.checks.iam import check_iam
from quotagov_tools.deploy.checks.operations import check_operations
from quotagov_tools.deploy.checks.sample_events import check_events
from quotagov_tools.deploy.checks.seals import check_seals
from quotagov_tools.deploy.template import (
    FUNCTION_TYPE,
    TemplateError,
    load_template,
    resources_of_type,
)

_PROG = "python -m quotagov_tools.deploy.checks"


def default_template(root: str | Path) -> Path:
    """``<root>/.aws-sam/build/template.yaml`` when ``sam build`` ran, else ``template.yaml``."""
    built = Path(root) / ".aws-sam" / "build" / "template.yaml"
    return built if built.is_file() else Path(root) / "template.yaml"


def _default_events_dir(template_path: Path) -> Path:
    """``events/`` of the project, found upwards from the template, else beside it.

    ``.aws-sam/build/template.yaml`` sits two levels below the project's ``events/``.
    """
    return next(
        (p / "events" for p in template_path.parents if (p / "events").is_dir()),
        template_path.parent / "events",
    )


def check_template(
    path: str | Path,
    *,
    events_dir: str | Path | None = None,
    python: str = sys.executable,
) -> list[Finding]:
    """Run every rule on the template at ``path``.

    Args:
        path: a source or built template.
        events_dir: sample events; default ``events/`` of the project, found upwards
            from the template (``.aws-sam/build`` sits two levels below it).
        python: interpreter for the handler imports.

    Returns:
        The ``handler``, ``event``, ``iam``, ``operations``, then ``seal`` findings
        (each family sorted).

    Raises:
        TemplateError: when the template cannot be read.
    """
    path = Path(path).resolve()
    template = load_template(path)
    if events_dir is None:
        events_dir = _default_events_dir(path)
    return [
        *check_handlers(template, path.parent, python=python),
        *check_events(template, events_dir),
        *check_iam(template),
        *check_operations(template),
        *check_seals(template),
    ]


def _description() -> str | None:
    """``--help`` text: the package's documentation of the rules."""
    return sys.modules[__name__.rpartition(".")[0]].__doc__


def main(argv: Iterable[str] | None = None) -> int:
    """Command line: print the findings, exit 1 when there are any (2: unreadable template).

    The last line reads ``<template>: <n> functions, <m> findings: passed|FAILED``.
    """
    parser = argparse.ArgumentParser(prog=_PROG, description=_description())
    parser.add_argument("template", nargs="?", help="default: built template, else template.yaml")
    parser.add_argument("--events", help="sample events directory (default: events/)")
    args = parser.parse_args(None if argv is None else list(argv))
    path = Path(args.template) if args.template else default_template(Path.cwd())
    try:
        findings = check_template(path, events_dir=args.events)
    except TemplateError as exc:
        print(exc, file=sys.stderr)
        return 2
    for finding in findings:
        print(finding)
    count = len(list(resources_of_type(load_template(path), FUNCTION_TYPE)))
    verdict = "FAILED" if findings else "passed"
    print(f"{path}: {count} functions, {len(findings)} findings: {verdict}")
    return 1 if findings else 0
