"""The streamed JSON output is byte for byte the whole document's, with or without
transitions (``quotagov simulate --output json`` / ``json-no-transitions``)."""

from __future__ import annotations

import io
import json
from typing import Any

from hypothesis import HealthCheck, given, settings

from quotagov.scheduler import dump_output, simulate, stream_output, validate_scenario

from .test_properties import scenarios


def _streamed(doc: dict[str, Any], transitions: bool = True) -> tuple[str, int]:
    buf = io.StringIO()
    count = stream_output(
        validate_scenario(doc, allow_unschedulable=True), buf, transitions=transitions
    )
    return buf.getvalue(), count


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_streamed_output_is_byte_identical(doc: dict[str, Any]) -> None:
    whole = simulate(validate_scenario(doc, allow_unschedulable=True))
    text, count = _streamed(doc)
    assert text == dump_output(whole)
    assert count == len(whole["transitions"])
    without, _ = _streamed(doc, transitions=False)
    del whole["transitions"]
    assert without == dump_output(whole)


def test_no_jobs_and_no_transitions_keep_the_empty_forms() -> None:
    doc = {
        "name": "empty",
        "capacity": {"ml.g5.xlarge": 1},
        "shares": [
            {
                "quotaShareName": "s",
                "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
                "resourceSharingConfiguration": {"strategy": "LEND"},
            }
        ],
        "jobs": [],
    }
    text, count = _streamed(doc)
    assert count == 0
    assert text == dump_output(simulate(validate_scenario(doc, allow_unschedulable=True)))
    assert json.loads(text)["jobs"] == {} and json.loads(text)["transitions"] == []
