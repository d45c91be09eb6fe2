"""POST /jobs/{jobId}/disposition and the chain on GET /jobs/{jobId} (jobs API handler)."""

from __future__ import annotations

import json
from typing import Any

from support.events import rest_event
from support.lambda_context import LambdaContext
from support.principals import ALICE, FRANK

from .conftest import World, exhausted_release_job, submitted


def call(method: str, job_id: str, principal: str, body: Any = None) -> tuple[int, Any]:
    from quotagov.handlers import jobs_api

    name = "jobs_api-disposition" if method == "POST" else "jobs_api-get"
    suffix = "/disposition" if method == "POST" else ""
    event = rest_event(
        name,
        path=f"/jobs/{job_id}{suffix}",
        path_parameters={"jobId": job_id},
        body=body,
        principal=principal,
    )
    reply = jobs_api.handler(event, LambdaContext(function_name="JobsApiFunction"))
    return reply["statusCode"], json.loads(reply["body"])


def test_owner_decides_once_over_the_api_and_the_chain_shows_both_jobs(world: World) -> None:
    exhausted_release_job(world, "rel-1")
    before = world.store.get("rel-1")
    # Fault 5: another team's caller gets the very answer of an unknown job.
    assert call("POST", "rel-1", ALICE, {"choice": "resubmit"}) == (
        404,
        {"message": "jobId: no job 'rel-1'"},
    )
    assert call("POST", "rel-9", ALICE, {"choice": "resubmit"}) == (
        404,
        {"message": "jobId: no job 'rel-9'"},
    )
    assert world.store.get("rel-1") == before
    status, reply = call("POST", "rel-1", FRANK, {"choice": "reclassify"})
    assert status == 400
    assert "not offered" in reply["message"]
    status, reply = call("POST", "rel-1", FRANK, {"choice": "later"})
    assert status == 400
    assert reply["faults"][0].startswith("choice:")
    assert call("POST", "nope", FRANK, {"choice": "abandon"})[0] == 404
    status, reply = call("POST", "rel-1", FRANK, {"choice": "resubmit"})
    assert status == 200
    assert (reply["status"], reply["choice"], reply["changed"]) == ("applied", "resubmit", True)
    assert reply["successorId"] == "rel-1-r1"
    status, reply = call("POST", "rel-1", FRANK, {"choice": "resubmit"})
    assert (status, reply["changed"]) == (200, False)
    status, reply = call("POST", "rel-1", FRANK, {"choice": "abandon"})
    assert status == 409
    assert reply["disposition"]["choice"] == "resubmit"
    assert [r["quotaShareName"] for r in submitted(world.batch)] == ["reserved"]
    status, view = call("GET", "rel-1-r1", FRANK)
    assert status == 200
    links = view["chain"]["links"]
    assert [link["submissionId"] for link in links] == ["rel-1", "rel-1-r1"]
    assert links[0]["status"] == "FAILED"
    assert links[0]["preemptionCount"] == 2
    assert links[0]["disposition"] == {
        "status": "applied",
        "trigger": "retries-exhausted",
        "choice": "resubmit",
        "decidedBy": FRANK,
        "targetShare": "reserved",
    }
    assert view["chain"]["predecessorId"] == "rel-1"


def test_deeply_nested_disposition_body_is_400_naming_the_body(world: World) -> None:
    exhausted_release_job(world, "rel-1")
    before = world.store.get("rel-1")
    status, reply = call("POST", "rel-1", FRANK, '{"choice":' + "[" * 1000 + "]" * 1000 + "}")
    assert status == 400
    assert reply["faults"] == ["(body): nested too deeply to decode"]
    assert world.store.get("rel-1") == before
