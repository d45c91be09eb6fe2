"""``docs/openapi.json``: generated from the resolvers, valid OpenAPI 3.1, true to the API.

- it is what :func:`quotagov.handlers.openapi.openapi_document` generates now (it
  drifts when a route, a model or a documented answer changes: regenerate with
  ``python -m quotagov.handlers.openapi --write``);
- it validates as OpenAPI 3.1 (``openapi-spec-validator``);
- its routes are the template's API routes, with the IAM (SigV4) scheme exactly on the
  routes the template puts behind ``AWS_IAM``;
- the status codes it documents are those the handlers answer (each error body an
  ``ErrorAnswer``, input faults a list of ``{path, fault}``, no Powertools 422), and
  every answer of the live local runtime to the cases driven here is one of them.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from quotagov.handlers.openapi import document_text, openapi_document
from quotagov_tools.deploy.template import load_template
from quotagov_tools.local.stack import Stack

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
    # every route reading DynamoDB may answer 503 for a retryable AWS fault
    ("get", "/jobs"): ["200", "400", "401", "403", "503"],
    ("get", "/jobs/{jobId}"): ["200", "400", "401", "404", "503"],
    ("post", "/jobs/{jobId}/disposition"): ["200", "400", "401", "404", "409", "415", "503"],
    ("post", "/jobs/{jobId}/escalations"): ["200", "201", "202", "400", "401", "415", "422", "503"],
    ("post", "/slack/interactions"): ["200", "400", "401", "503"],
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


@pytest.mark.slow  # a whole local runtime (moto, fake Slack server)
def test_the_live_runtime_answers_only_documented_codes(document: dict[str, Any]) -> None:
    """Each answer of the local runtime's API (the template's routes and environment, so a
    direct escalation is handed to the apply function as deployed) for the cases that can
    be driven here is a code its route documents. Not driven: 401 (API Gateway's IAM
    authorizer answers unsigned requests itself, with its own 403, before any function
    runs) and 503 (a dependency down)."""
    import contextlib
    import io

    from quotagov_tools.local.demo_story import ALICE, DAVE, Demo
    from quotagov_tools.local.slack_clicks import signed_form
    from quotagov_tools.local.stack import ACCOUNT_ID
    from support.runtime import quiet_runtime

    mallory = f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/researcher/mallory"
    seen: dict[tuple[str, str], set[int]] = {}
    answers: list[tuple[str, str, int, Any]] = []
    with quiet_runtime() as runtime, contextlib.redirect_stdout(io.StringIO()):
        demo = Demo(runtime, echo=None)

        def call(method: str, path: str, **kwargs: Any) -> int:
            response = runtime.api(method, path, **kwargs)
            found = runtime.route(method, path)
            assert found is not None, (method, path)
            seen.setdefault((method.lower(), found[0].path), set()).add(response.status)
            answers.append((method.lower(), found[0].path, response.status, response.body))
            return response.status

        def submit(principal: str, name: str, **kwargs: Any) -> str:
            response = demo.submit(principal, name, **kwargs)
            seen.setdefault(("post", "/jobs"), set()).add(response.status)
            answers.append(("post", "/jobs", response.status, response.body))
            return str(demo.submissions[name]["submissionId"])

        bg = submit(
            ALICE,
            "bg-1",
            team="research",
            workload_class="exploratory",
            share="background",
            run_seconds=3600,
            checkpoint_interval=300,
        )
        med = submit(
            DAVE,
            "med-1",
            team="applied",
            workload_class="scheduled",
            share="medium",
            run_seconds=3600,
            level="low",
        )
        submit(  # refused by the policy: 422
            DAVE,
            "eval",
            team="applied",
            workload_class="scheduled",
            share="background",
            run_seconds=60,
        )
        submit(  # not a member of the team: 403
            mallory,
            "sneak",
            team="research",
            workload_class="exploratory",
            share="background",
            run_seconds=60,
        )
        submit(  # the same clientRequestId, another request: 409
            ALICE,
            "bg-1",
            team="research",
            workload_class="exploratory",
            share="background",
            run_seconds=60,
        )
        call("POST", "/jobs", principal=ALICE, body={})
        call("POST", "/jobs", principal=ALICE, body="x", headers={"Content-Type": "text/plain"})
        runtime.advance(60)

        call("GET", "/jobs", principal=ALICE, query={"team": ["research"]})
        call("GET", "/jobs", principal=ALICE, query={"team": ["applied"]})
        call("GET", "/jobs", principal=ALICE, query={"team": ["research"], "limit": ["x"]})
        call("GET", f"/jobs/{bg}", principal=ALICE)
        call("GET", f"/jobs/{bg}", principal=mallory)
        call("GET", "/jobs/no-such-job", principal=ALICE)
        call("GET", "/jobs/bad.id", principal=ALICE)

        disposition = f"/jobs/{bg}/disposition"
        call("POST", disposition, principal=ALICE, body={"choice": "resubmit"})
        call("POST", disposition, principal=mallory, body={"choice": "resubmit"})
        call("POST", disposition, principal=ALICE, body={"choice": "later"})
        call(
            "POST",
            disposition,
            principal=ALICE,
            body="x",
            headers={"Content-Type": "text/plain"},
        )

        reason = {"reason": "a deadline"}
        direct = call(
            "POST",
            f"/jobs/{med}/escalations",
            principal=DAVE,
            body={"level": "standard"} | reason,
        )
        pending = call(
            "POST", f"/jobs/{bg}/escalations", principal=ALICE, body={"level": "high"} | reason
        )
        call(
            "POST",
            f"/jobs/{bg}/escalations",
            principal=mallory,
            body={"level": "high"} | reason,
        )
        call(
            "POST",
            "/jobs/no-such-job/escalations",
            principal=ALICE,
            body={"level": "high"} | reason,
        )
        call("POST", f"/jobs/{bg}/escalations", principal=ALICE, body={"level": 7})
        call(
            "POST",
            f"/jobs/{bg}/escalations",
            principal=ALICE,
            body="[" * 100_000 + "]" * 100_000,
        )
        call(
            "POST",
            f"/jobs/{bg}/escalations",
            principal=ALICE,
            body="x",
            headers={"Content-Type": "text/plain"},
        )

        now = runtime.clock.now()
        unknown = {
            "type": "block_actions",
            "user": {"id": "U0ERIN"},
            "actions": [{"action_id": "escalation_approve", "value": "no-such-escalation"}],
        }
        body, headers = signed_form(unknown, runtime.signing_secret, now)
        call("POST", "/slack/interactions", body=body, headers=headers)
        body, headers = signed_form(unknown, "not-the-secret", now)
        call("POST", "/slack/interactions", body=body, headers=headers)
        body, headers = signed_form({"type": "block_actions"}, runtime.signing_secret, now)
        call("POST", "/slack/interactions", body=body, headers=headers)

    assert (direct, pending) == (202, 201)  # as deployed: the direct level is handed over
    for method, route, status, body in answers:  # each body is its documented schema's
        check_answer(document, method, route, status, body)
    undocumented = {
        route: sorted(status for status in statuses if str(status) not in EXPECTED_CODES[route])
        for route, statuses in seen.items()
    }
    assert {route: codes for route, codes in undocumented.items() if codes} == {}
    assert {route: sorted(statuses) for route, statuses in seen.items()} == {
        ("post", "/jobs"): [202, 400, 403, 409, 415, 422],
        ("get", "/jobs"): [200, 400, 403],
        ("get", "/jobs/{jobId}"): [200, 400, 404],
        ("post", "/jobs/{jobId}/disposition"): [400, 404, 409, 415],
        ("post", "/jobs/{jobId}/escalations"): [201, 202, 400, 415, 422],
        ("post", "/slack/interactions"): [200, 400, 401],
    }


def test_the_job_view_documents_every_member_the_handler_answers(
    document: dict[str, Any],
) -> None:
    """``GET /jobs/{jobId}`` answers through :class:`~quotagov.handlers.api_contract.JobView`
    (the handler validates its view with it), so the document lists every member: the
    waiting explanation, the job-state facts and the resubmission chain included."""
    schemas = document["components"]["schemas"]
    view = schemas["JobView"]["properties"]
    assert {
        "batch",
        "chain",
        "jobState",
        "disposition",
        "retryStrategy",
        "timeoutConfig",
        "tags",
        "createdAt",
        "schedulingPriority",
    } <= set(view)
    assert set(schemas["BatchView"]["properties"]) >= {"status", "frontOfShare", "waiting"}
    assert set(schemas["Waiting"]["properties"]) >= {"position", "reason", "estimatedStartAt"}
    assert set(schemas["Chain"]["properties"]) == {
        "predecessorId",
        "originalId",
        "successorIds",
        "resubmitCount",
        "links",
    }
    submission = schemas["SubmissionRequest"]["properties"]
    assert {"retryStrategy", "timeoutConfig", "tags"} <= set(submission)


# --- live answers against the document's schemas -----------------------------------------

#: ISO 8601 UTC with ``Z``, the one format of every instant the API answers.
INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$")


def check_answer(document: dict[str, Any], method: str, route: str, status: int, raw: Any) -> Any:
    """Validate one answer body (bytes/str/JSON) against ``docs/openapi.json``'s schema
    for ``route``, ``method`` and ``status``; returns the decoded body."""
    answer = document["paths"][route][method]["responses"].get(str(status))
    assert answer is not None, f"{method} {route} answered {status}, which it does not document"
    body = json.loads(raw) if isinstance(raw, bytes | str) and raw else raw
    if body is None:  # Slack's acknowledgement: an empty 200
        assert (route, status) == ("/slack/interactions", 200), (method, route, status)
        return body
    schema = answer["content"]["application/json"]["schema"]
    validator = Draft202012Validator({**schema, "components": document["components"]})
    faults = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(body)]
    assert faults == [], (method, route, status, faults)
    return body


def _closed(schema: dict[str, Any], schemas: dict[str, Any], seen: set[str]) -> list[str]:
    """Names of object schemas reachable from ``schema`` that accept undocumented members."""
    open_ones: list[str] = []
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in seen:
            return []
        seen.add(name)
        target = schemas[name]
        if "properties" in target and target.get("additionalProperties") is not False:
            open_ones.append(name)
        return open_ones + _closed(target, schemas, seen)
    for value in schema.values():
        children = value if isinstance(value, list) else [value]
        for child in children:
            if isinstance(child, dict):
                open_ones += _closed(child, schemas, seen)
    return open_ones


def test_every_success_answer_is_closed_to_undocumented_members(
    document: dict[str, Any],
) -> None:
    """``additionalProperties: false`` on every object a success answer holds, so a live
    answer with a member the document does not list fails :func:`check_answer`."""
    schemas = document["components"]["schemas"]
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for status, answer in operation["responses"].items():
                if int(status) >= 400 or path == "/slack/interactions":
                    continue
                schema = answer["content"]["application/json"]["schema"]
                assert _closed(schema, schemas, set()) == [], (method, path, status)


def test_every_documented_example_matches_its_schema(document: dict[str, Any]) -> None:
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for status, answer in operation["responses"].items():
                for example in answer["content"]["application/json"].get("examples", {}).values():
                    check_answer(document, method, path, int(status), example["value"])


def _instants(body: Any, path: str = "") -> dict[str, Any]:
    """Every member whose name says it is an instant (``...At``, ``asOf``,
    ``earliestTimeAtPosition``), by path."""
    found: dict[str, Any] = {}
    if isinstance(body, dict):
        for key, value in body.items():
            here = f"{path}.{key}"
            if (key.endswith("At") or key in ("asOf", "earliestTimeAtPosition")) and (
                value is not None
            ):
                found[here] = value
            found |= _instants(value, here)
    elif isinstance(body, list):
        for i, value in enumerate(body):
            found |= _instants(value, f"{path}[{i}]")
    return found


@pytest.mark.slow  # the whole demo story on a local runtime (about a minute)
def test_the_demo_storys_answers_match_the_document(document: dict[str, Any]) -> None:
    """Every answer of the demo's story (submissions, refusals, the job view while
    RUNNABLE with ``waiting``, RUNNING, FAILED with its disposition, SUCCEEDED; the
    escalation's 201; Slack's acknowledgements) and, after it, each job's view, the
    reclassified successor run to SUCCEEDED with its resubmission chain and a listing
    page by page: each validates against its route's documented schema (closed, so an
    undocumented member fails), and every instant in them is ISO 8601 UTC."""
    from quotagov_tools.local.demo_story import ALICE, Demo
    from support.runtime import quiet_runtime

    answers: list[tuple[str, str, int, Any]] = []
    with quiet_runtime() as runtime, contextlib.redirect_stdout(io.StringIO()):
        sent = runtime.api

        def recorded(method: str, path: str, **kwargs: Any) -> Any:
            response = sent(method, path, **kwargs)
            found = runtime.route(method, path)
            assert found is not None, (method, path)
            answers.append((method.lower(), found[0].path, response.status, response.body))
            return response

        runtime.api = recorded  # type: ignore[method-assign]
        demo = Demo(runtime, echo=None)
        result = demo.run()
        assert result.ok, result.failures[:3]
        bg1 = demo.submissions["bg-1"]
        view = json.loads(recorded("GET", f"/jobs/{bg1['submissionId']}", principal=ALICE).body)
        successor = view["disposition"]["successorId"]
        runtime.advance(6 * 3600)  # the successor runs to its end
        after = json.loads(recorded("GET", f"/jobs/{successor}", principal=ALICE).body)
        for entry in demo.submissions.values():
            recorded("GET", f"/jobs/{entry['submissionId']}", principal=entry["principal"])
        token = None
        for _ in range(10):
            query = {"team": ["research"], "limit": ["2"]}
            if token:
                query["nextToken"] = [token]
            page = json.loads(recorded("GET", "/jobs", principal=ALICE, query=query).body)
            token = page["nextToken"]
            if not token:
                break

    bodies = [check_answer(document, *answer) for answer in answers]
    views = [b for (m, r, st, _), b in zip(answers, bodies, strict=True) if r == "/jobs/{jobId}"]
    statuses = {((v.get("batch") or {}).get("status")) for v in views}
    assert {"RUNNABLE", "RUNNING", "FAILED", "SUCCEEDED"} <= statuses
    assert any((v.get("batch") or {}).get("waiting") for v in views)
    assert view["batch"]["status"] == "FAILED" and view["disposition"]["status"] == "applied"
    assert after["batch"]["status"] == "SUCCEEDED"
    assert after["chain"]["predecessorId"] == bg1["submissionId"]
    assert [link["submissionId"] for link in after["chain"]["links"]] == [
        bg1["submissionId"],
        successor,
    ]
    codes = {(m, r, st) for m, r, st, _ in answers}
    assert {("post", "/jobs", 202), ("post", "/jobs", 422), ("get", "/jobs", 200)} <= codes
    assert ("post", "/jobs/{jobId}/escalations", 201) in codes
    instants = {k: v for b in bodies for k, v in _instants(b).items()}
    assert {".createdAt", ".jobState.asOf", ".disposition.openedAt"} <= set(instants)
    assert {k: v for k, v in instants.items() if not INSTANT.match(str(v))} == {}
