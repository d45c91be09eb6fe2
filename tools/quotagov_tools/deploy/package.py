"""What a function's package holds: the Lambda runtime, never a tool module.

The template's functions ship their ``CodeUri`` directory (``src/``: the :mod:`quotagov`
package); the tools (:mod:`quotagov_tools`: the CLI, the local runtime, the simulated
Batch, the what-if, the deploy checks) live in ``tools/`` beside it. :func:`tool_modules`
finds a tool module in a package directory, whether the source tree a ``CodeUri`` names
or what ``sam build`` wrote under ``.aws-sam/build/<LogicalId>/``; ``make lint-template``
runs ``python -m quotagov_tools.deploy.package .aws-sam/build`` after ``sam build``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

#: Package names that belong to the tools and must never ship in a function's package.
TOOL_PACKAGES = frozenset({"quotagov_tools", "local", "whatif", "commands", "deploy", "simbatch"})


@dataclass(frozen=True)
class PackageFigures:
    """One function package's size.

    Attributes:
        files: files in the package (``__pycache__`` left out).
        bytes: their total size, bytes.
        modules: Python modules (``.py`` files).
    """

    files: int
    bytes: int
    modules: int


def _files(root: Path) -> list[Path]:
    return sorted(
        path for path in root.rglob("*") if path.is_file() and "__pycache__" not in path.parts
    )


def tool_modules(root: Path) -> list[str]:
    """Dotted names of the tool modules under ``root`` (a package directory), sorted.

    A module is a tool module when a package on its path is in :data:`TOOL_PACKAGES`,
    under a ``quotagov`` or ``quotagov_tools`` top-level package (third-party code, if
    any, is not looked at). ``[]`` when the package is clean.
    """
    found = []
    for path in _files(root):
        if path.suffix != ".py":
            continue
        parts = path.relative_to(root).with_suffix("").parts
        if not parts or parts[0] not in ("quotagov", "quotagov_tools"):
            continue
        if parts[0] == "quotagov_tools" or TOOL_PACKAGES.intersection(parts[1:-1]):
            found.append(".".join(parts))
    return found


def figures(root: Path) -> PackageFigures:
    """Files, bytes and modules of the package directory ``root``."""
    files = _files(root)
    return PackageFigures(
        files=len(files),
        bytes=sum(path.stat().st_size for path in files),
        modules=sum(1 for path in files if path.suffix == ".py"),
    )


def main(argv: list[str] | None = None) -> int:
    """Check every function directory under a ``sam build`` output directory.

    Prints one line per function (files, size) and every tool module found; returns 1
    when any function's package holds one, 2 when the directory has no function, else 0.
    """
    args = sys.argv[1:] if argv is None else argv
    build = Path(args[0] if args else ".aws-sam/build")
    functions = (
        sorted(path for path in build.iterdir() if path.is_dir() and (path / "quotagov").is_dir())
        if build.is_dir()
        else []
    )
    if not functions:
        print(f"{build}: no function package (run sam build first)", file=sys.stderr)
        return 2
    faults = 0
    for function in functions:
        size = figures(function)
        tools = tool_modules(function)
        print(f"{function.name}: {size.modules} modules, {size.bytes / 1024:.0f} KiB")
        for module in tools:
            print(f"  tool module in the function's package: {module}", file=sys.stderr)
        faults += len(tools)
    return 1 if faults else 0


if __name__ == "__main__":
    raise SystemExit(main())
