"""The package's optional extras and the commands that need them: one table.

The base install (``pip install quotagov``, the dependencies a deployed function has)
runs every command that talks to AWS or simulates in pure Python. Some commands need
more (``pyproject.toml``, ``[project.optional-dependencies]``):

- ``local``: moto, in-process, for the embedded runtime of ``demo``, ``serve`` and
  ``invoke`` (:mod:`quotagov_tools.local.runtime`);
- ``plot``: matplotlib for the PNG plots ``whatif`` always writes beside its report
  (:mod:`quotagov_tools.whatif.plots`; ``whatif`` has no option to leave them out).

:data:`COMMAND_EXTRAS` is that table; :func:`quotagov_tools.cli.main` asks
:func:`missing_extra` before it runs a command, so a command whose extra is missing
stops at once with :func:`refusal` (one line, exit 2) instead of failing halfway with a
traceback. The check looks modules up (:func:`importlib.util.find_spec`) without
importing them, so it costs nothing when the extra is there.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Extra:
    """An extra of ``pyproject.toml``.

    Attributes:
        name: the extra's name (``local``).
        modules: top-level modules the commands import from it; all of them present
            proves the extra is installed (``moto``, and ``jsonpath_ng`` of
            ``moto[events]``, which the event bus needs).
    """

    name: str
    modules: tuple[str, ...]


LOCAL = Extra("local", ("moto", "jsonpath_ng"))
PLOT = Extra("plot", ("matplotlib",))

#: Command (the first word after ``quotagov``) -> the extra it needs. A command not
#: named here needs the base install only.
COMMAND_EXTRAS: Mapping[str, Extra] = {
    "demo": LOCAL,
    "serve": LOCAL,
    "invoke": LOCAL,
    "whatif": PLOT,
}


def missing_modules(modules: Iterable[str]) -> list[str]:
    """The names among ``modules`` (top-level module names) that cannot be imported.

    A module counts as missing when no finder locates it, or when ``sys.modules`` holds
    ``None`` for it (Python's own way to block an import). Nothing is imported.
    """
    missing = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a half-initialised or spec-less entry
            found = False
        if not found:
            missing.append(name)
    return missing


def missing_extra(command: str) -> Extra | None:
    """The extra ``command`` needs when one of its modules is missing, else ``None``
    (also for a command that needs no extra)."""
    extra = COMMAND_EXTRAS.get(command)
    if extra is None or not missing_modules(extra.modules):
        return None
    return extra


def refusal(command: str, extra: Extra) -> str:
    """The one line printed when ``command`` cannot run without ``extra``.

    ``quotagov demo needs the 'local' extra (moto is not installed): pip install
    'quotagov[local]'``; the parenthesis names the modules that are missing (none, no
    parenthesis).
    """
    absent = missing_modules(extra.modules)
    why = ""
    if absent:
        why = f" ({', '.join(absent)} {'is' if len(absent) == 1 else 'are'} not installed)"
    return (
        f"quotagov {command} needs the '{extra.name}' extra{why}: "
        f"pip install 'quotagov[{extra.name}]'"
    )
