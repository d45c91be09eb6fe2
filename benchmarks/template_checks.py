"""Time the template checker on the project template and size the build artifacts.

Run after ``make lint-template`` (or on the source template when nothing was built)::

    .venv/bin/python benchmarks/template_checks.py

Prints seconds per check (best of 3; the handler check starts one interpreter per code
directory) and, when ``.aws-sam/build`` exists, the unzipped size of each artifact
(Lambda allows 250 MB unzipped for a function plus its layers).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from quotagov_tools.deploy.checks import check_events, check_handlers, check_iam, default_template
from quotagov_tools.deploy.template import load_template

ROOT = Path(__file__).resolve().parents[1]


def _best_of(runs: int, work: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def _size_mb(directory: Path) -> float:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file()) / 1e6


def main() -> int:
    """Print the figures; exit 0."""
    path = default_template(ROOT)
    template = load_template(path)
    print(f"template: {path.relative_to(ROOT)}")
    figures = {
        "load_template": lambda: load_template(path),
        "check_iam": lambda: check_iam(template),
        "check_events": lambda: check_events(template, ROOT / "events"),
        "check_handlers": lambda: check_handlers(template, path.parent, python=sys.executable),
    }
    for name, work in figures.items():
        print(f"{name:>15}: {_best_of(3, work):8.3f} s")
    build = ROOT / ".aws-sam" / "build"
    if build.is_dir():
        for artifact in sorted(p for p in build.iterdir() if p.is_dir()):
            print(f"{artifact.name:>26}: {_size_mb(artifact):7.1f} MB unzipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
