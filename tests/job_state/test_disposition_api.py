"""POST /jobs/{jobId}/disposition and the chain on GET /jobs/{jobId} (jobs API handler)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .conftest import START, World, submitted
from .envelopes import preempted_twice
from .lambda_support import FakeContext

EVENTS = Path(__file__).resolve().parents[2] / "events"
FRANK = "arn:aws:sts::111122223333:assumed-role/release/frank"
ALICE = "arn:aws:sts::111122223333:assumed-role/researcher/alice"


def call(method: str, job_id: str, principal: str, body: Any = None) -> tuple[int, Any]:
    from quotagov.handlers import jobs_api

    name = "jobs_api-disposition" if method == "POST" else "jobs_api-get"
    event = json.loads((EVENTS / f"{name}.json").read_text())
    suffix = "/disposition" if method == "POST" else ""
    event["path"] = f"/jobs/{job_id}{suffix}"
    event["pathParameters"] = {"jobId": job_id}
    event["body"] = body if isinstance(body, str) or body is None else json.dumps(body)
    event["requestContext"]["identity"]["userArn"] = principal
    reply = jobs_api.handler(event, FakeContext(function_name="JobsApiFunction"))
    return reply["statusCode"], json.loads(reply["body"])


def exhausted_release_job(world: World) -> None:
    world.clock.set(START + 4000)
    world.record(
        "rel-1",
        batch_job_id="batch-rel-1",
        workload_class="release",
        team="release",
        share="reserved",
        retries=1,
        checkpoint_interval=None,
        principal=FRANK,
    )
    for event in preempted_twice("batch-rel-1", int(START * 1000)):
        from quotagov.handlers import job_state

        job_state.handler(event, FakeContext())


def test_owner_decides_once_over_the_api_and_the_chain_shows_both_jobs(world: World) -> None:
    exhausted_release_job(world)
    assert call("POST", "rel-1", ALICE, {"choice": "resubmit"})[0] == 403
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
    exhausted_release_job(world)
    before = world.store.get("rel-1")
    status, reply = call("POST", "rel-1", FRANK, '{"choice":' + "[" * 1000 + "]" * 1000 + "}")
    assert status == 400
    assert reply["faults"] == ["(body): nested too deeply to decode"]
    assert world.store.get("rel-1") == before
