"""A request whose headers are not text (a direct invocation of the API functions) is a
400 naming the header, and nothing is stored: the example the event property test found
(``Content-Type: null`` on ``POST /jobs`` raised in Powertools' body parsing, a 502)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions

EVENTS = Path(__file__).resolve().parents[2] / "events"


@pytest.fixture(scope="module")
def runtime() -> Iterator[LocalRuntime]:
    with LocalRuntime(RuntimeOptions()) as rt:
        yield rt


@pytest.mark.slow
@pytest.mark.parametrize(
    ("function", "sample"),
    [
        ("JobsApiFunction", "jobs_api-submit"),
        ("JobsApiFunction", "jobs_api-list"),
        ("EscalationsApiFunction", "escalations_api-request"),
    ],
)
def test_a_null_content_type_is_a_400_and_stores_nothing(
    runtime: LocalRuntime, function: str, sample: str
) -> None:
    event = json.loads((EVENTS / f"{sample}.json").read_text())
    event["headers"] = {**(event.get("headers") or {}), "Content-Type": None}
    table = runtime.environments["JobsApiFunction"]["JOBS_TABLE"]
    before = boto3.client("dynamodb").scan(TableName=table)["Items"]

    record = runtime.invoke(function, event)

    assert record.ok, record.error
    assert record.result["statusCode"] == 400
    assert json.loads(record.result["body"]) == {
        "message": "invalid request",
        "faults": [{"path": "headers.Content-Type", "fault": "must be a string"}],
    }
    assert boto3.client("dynamodb").scan(TableName=table)["Items"] == before
