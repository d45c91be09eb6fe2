"""``docs/scenario-format.schema.json``: the JSON Schema of a scenario, from the models.

The schema is :func:`quotagov.scheduler.scenario_models.json_schema` (JSON Schema draft
2020-12), written with a 2-space indent. ``python -m quotagov.scheduler.scenario_schema``
prints it, ``--write`` writes the file; ``tests/scheduler/test_scenario_schema.py``
fails when the committed file drifts from the models.

The schema holds every field rule and the cross-field rules JSON Schema can express (at
most 20 shares, 1 to 5 capacity limits, ``borrowLimit`` at least -1, an
``UpdateQuotaShare`` that changes something). It cannot express the others (unique
names, references to shares and jobs, instance types within a share's limits, action
times, jobs that can never be admitted), and it counts ``1.0`` as an integer where the
validator wants ``1``: a document the schema accepts can still be refused by
``quotagov simulate``, never the other way round.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: Where the schema is kept in the repository.
SCHEMA_PATH = Path("docs/scenario-format.schema.json")


def schema_text() -> str:
    """The schema as ``docs/scenario-format.schema.json`` holds it (2-space indent)."""
    from quotagov.scheduler.scenario_models import json_schema

    return json.dumps(json_schema(), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the schema, or with ``--write`` write ``docs/scenario-format.schema.json``."""
    args = sys.argv[1:] if argv is None else argv
    text = schema_text()
    if "--write" in args:
        SCHEMA_PATH.write_text(text, encoding="utf-8")
        print(f"wrote {SCHEMA_PATH}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
