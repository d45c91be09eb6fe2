"""The streamed JSON output is byte for byte the whole document's, with or without
transitions (``quotagov simulate --output json`` / ``json-no-transitions``)."""

from __future__ import annotations

import io
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quotagov.scheduler import dump_output, simulate, stream_output, validate_scenario
from quotagov.scheduler.simulation import normalize
from quotagov.scheduler.streaming import _num_text

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


@settings(max_examples=3000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_numbers_are_written_as_normalize_then_json_dumps_writes_them(value: float) -> None:
    """The templates' numbers (times, lost seconds) are json.dumps(normalize(x)):
    integral floats as ints, others rounded to 6 decimals, shortest form."""
    assert _num_text(value) == json.dumps(normalize(value))


def test_number_edge_cases() -> None:
    for value, text in [
        (0.1 + 0.2, "0.3"),
        (14775.678000000002, "14775.678"),
        (2.0000001, "2.0"),
        (1e-05, "1e-05"),
        (0.00012345678, "0.000123"),
        (123456789.1234565, "123456789.123456"),  # the float is just below the half
        (-0.0, "0"),
        (1e22, "10000000000000000000000"),
        (3, "3"),
        (None, "null"),
    ]:
        assert _num_text(value) == text
        assert text == json.dumps(normalize(value))


def test_fractional_times_and_names_to_escape_stream_byte_identical() -> None:
    """Fractional times, checkpoints and overheads (preemptions with lost seconds),
    and job names json.dumps escapes (non-ASCII, a quote), streamed as dump_output."""
    doc = {
        "name": "fractions \u00e9",
        "capacity": {"ml.g5.xlarge": 2},
        "options": {"startupSeconds": 2.5, "queueing": "STRICT_FIFO"},
        "shares": [
            {
                "quotaShareName": "low",
                "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
                "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW"},
            },
            {
                "quotaShareName": "high",
                "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
                "resourceSharingConfiguration": {"strategy": "LEND"},
            },
        ],
        "jobs": [
            {
                "jobName": "b\u00f6rrower",
                "quotaShareName": "low",
                "submittedAt": 0.1,
                "instanceType": "ml.g5.xlarge",
                "instanceCount": 2,
                "runSeconds": 1000.3,
                "checkpointIntervalSeconds": 13.3,
                "restartOverheadSeconds": 0.25,
            },
            {
                "jobName": 'own"er',
                "quotaShareName": "high",
                "submittedAt": 100.2,
                "instanceType": "ml.g5.xlarge",
                "runSeconds": 50.05,
            },
        ],
    }
    whole = simulate(validate_scenario(doc))
    assert [p["kind"] for p in whole["jobs"]["b\u00f6rrower"]["preemptions"]] == ["CROSS_SHARE"]
    # borrowed both instances at 0.1, RUNNING from 2.6; reclaimed at 100.2 after 97.6 s:
    # 7 checkpoints of 13.3 s saved 93.1 s, so 4.5 s were lost
    assert whole["jobs"]["b\u00f6rrower"]["preemptions"][0]["lostSeconds"] == 4.5
    text, count = _streamed(doc)
    assert text == dump_output(whole)
    assert count == len(whole["transitions"])
