"""Query string parameters that are not text get a 400 naming them (found by the event
property test: Powertools' validation middleware raised on ``{"x": None}``)."""

from __future__ import annotations

import json

from quotagov.handlers.api_errors import query_fault_answer


def test_non_text_query_parameters_are_refused_with_their_paths() -> None:
    answer = query_fault_answer(
        {
            "queryStringParameters": {"x": None, "team": "research", "n": 3},
            "multiValueQueryStringParameters": {"x": [None], "team": ["research"]},
        }
    )
    assert answer is not None and answer["statusCode"] == 400
    assert json.loads(answer["body"]) == {
        "message": "invalid request",
        "faults": [
            {"path": "query.x", "fault": "must be a string"},
            {"path": "query.n", "fault": "must be a string"},
            {"path": "query.x", "fault": "must be a list of strings"},
        ],
    }


def test_what_api_gateway_sends_is_left_to_the_resolver() -> None:
    assert query_fault_answer({"queryStringParameters": None}) is None
    assert query_fault_answer({"queryStringParameters": {"team": "research", "x": ""}}) is None
    assert query_fault_answer({"multiValueQueryStringParameters": {"team": ["a", "b"]}}) is None
    assert query_fault_answer("not an event") is None


def test_non_text_headers_are_refused_with_their_paths() -> None:
    """A ``Content-Type`` of ``null`` (a direct invocation) made Powertools' body
    parsing raise ``AttributeError`` (found by the event property test)."""
    answer = query_fault_answer(
        {
            "headers": {"Content-Type": None, "Host": "abc123.execute-api.eu-west-1.amazonaws.com"},
            "multiValueHeaders": {"Content-Type": [{"a": 1}], "Host": ["h"]},
        }
    )
    assert answer is not None and answer["statusCode"] == 400
    assert json.loads(answer["body"])["faults"] == [
        {"path": "headers.Content-Type", "fault": "must be a string"},
        {"path": "headers.Content-Type", "fault": "must be a list of strings"},
    ]
    assert json.loads(query_fault_answer({"headers": ["x"]})["body"])["faults"] == [  # type: ignore[index]
        {"path": "headers", "fault": "must be an object of strings"}
    ]
    assert query_fault_answer({"headers": None, "multiValueHeaders": {"a": ["b"]}}) is None
