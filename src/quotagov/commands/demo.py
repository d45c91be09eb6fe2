"""``quotagov demo``: for now, the simulator on the packaged AWS walkthrough scenario.

Runs ``quotagov simulate`` with table output on ``quotagov/examples/aws-walkthrough.json``
(the scenario worked by hand in ``../shared/scenarios/aws-walkthrough.expected.md``).
The end-to-end demo of the controller replaces this module later.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from typing import Any

from quotagov.commands.simulate import render_table
from quotagov.scheduler import load_scenario, simulate

WALKTHROUGH = "aws-walkthrough.json"


def register(subparsers: Any) -> None:
    """Add the ``demo`` subcommand."""
    parser = subparsers.add_parser(
        "demo", help="run the simulator on the packaged AWS walkthrough scenario"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Simulate the packaged walkthrough and print the table report; returns 0."""
    text = resources.files("quotagov.examples").joinpath(WALKTHROUGH).read_text(encoding="utf-8")
    sys.stdout.write(render_table(simulate(load_scenario(text))))
    return 0
