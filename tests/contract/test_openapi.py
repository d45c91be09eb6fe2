"""``docs/openapi.json``: generated from the resolvers, valid OpenAPI 3.1, true to the API.

- it is what :func:`quotagov.handlers.openapi.openapi_document` generates now (it
  drifts when a route, a model or a documented answer changes: regenerate with
  ``python -m quotagov.handlers.openapi --write``);
- it validates as OpenAPI 3.1 (``openapi-spec-validator``);
- its routes are the template's API routes, with the IAM (SigV4) scheme exactly on the
  routes the template puts behind ``AWS_IAM``;
- the status codes it documents are those the handlers answer (each error body an
  ``ErrorAnswer``, input faults a list of ``{path, fault}``, no Powertools 422).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate

from quotagov.deploy.template import load_template
from quotagov.handlers.openapi import document_text, openapi_document
from quotagov.local.stack import Stack

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "docs/openapi.json"


@pytest.fixture(scope="module")
def document(aws_env: None) -> dict[str, Any]:
    return openapi_document()


@pytest.fixture(scope="module")
def aws_env() -> None:
    import os

    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")


def test_the_committed_document_is_the_generated_one(document: dict[str, Any]) -> None:
    assert DOCUMENT.read_text(encoding="utf-8") == document_text(), (
        "docs/openapi.json drifted from the resolvers: python -m quotagov.handlers.openapi --write"
    )


def test_it_validates_as_openapi_3_1(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.1")
    validate(json.loads(DOCUMENT.read_text()))


def _template_routes() -> dict[tuple[str, str], bool]:
    stack = Stack(
        load_template(ROOT / "template.yaml"),
        {"JobQueueArn": "arn:aws:batch:eu-west-1:111122223333:job-queue/q"},
    )
    return {(r.method.lower(), r.path): r.iam_auth for r in stack.api_routes()}


def test_its_routes_and_security_are_the_templates(document: dict[str, Any]) -> None:
    documented = {
        (method, path): operation.get("security") == [{"sigv4": []}]
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    }
    assert documented == _template_routes()
    scheme = document["components"]["securitySchemes"]["sigv4"]
    assert (scheme["type"], scheme["in"], scheme["name"]) == ("apiKey", "header", "Authorization")
    assert scheme["x-amazon-apigateway-authtype"] == "awsSigv4"


EXPECTED_CODES = {
    ("post", "/jobs"): ["202", "400", "401", "403", "409", "415", "422", "503"],
    ("get", "/jobs"): ["200", "400", "401", "403"],
    ("get", "/jobs/{jobId}"): ["200", "400", "401", "403", "404"],
    ("post", "/jobs/{jobId}/disposition"): ["200", "400", "401", "403", "404", "409", "415", "503"],
    ("post", "/jobs/{jobId}/escalations"): ["200", "201", "400", "401", "403", "415", "422", "503"],
    ("post", "/slack/interactions"): ["200", "400", "401"],
}


def test_every_route_documents_the_codes_it_answers(document: dict[str, Any]) -> None:
    codes = {
        (method, path): list(operation["responses"])
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    }
    assert codes == EXPECTED_CODES


def test_post_jobs_answers_202_json_and_400_with_path_fault_list(document: dict[str, Any]) -> None:
    answers = document["paths"]["/jobs"]["post"]["responses"]
    accepted = answers["202"]["content"]["application/json"]
    assert accepted["schema"] == {"$ref": "#/components/schemas/SubmissionAccepted"}
    assert accepted["examples"]["example"]["value"]["state"] == "QUEUED"
    bad = answers["400"]["content"]["application/json"]
    assert bad["schema"] == {"$ref": "#/components/schemas/ErrorAnswer"}
    fault = document["components"]["schemas"]["Fault"]
    assert sorted(fault["required"]) == ["fault", "path"]
    assert all(set(f) == {"path", "fault"} for f in bad["examples"]["example"]["value"]["faults"])
    assert "HTTPValidationError" not in json.dumps(document)


def test_every_error_answer_is_an_error_answer(document: dict[str, Any]) -> None:
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for status, answer in operation["responses"].items():
                if int(status) < 400 or (method, path, status) == ("post", "/jobs", "422"):
                    continue  # 422 of POST /jobs is the stored REFUSED submission
                schema = answer["content"]["application/json"]["schema"]["$ref"]
                assert schema.rsplit("/", 1)[-1] in ("ErrorAnswer", "IdempotencyMismatch"), (
                    method,
                    path,
                    status,
                )
