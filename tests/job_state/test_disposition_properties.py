"""Property: mutated ``POST /jobs/{jobId}/disposition`` requests never give a
5xx or an unhandled exception, and never leave a half-written decision.

Frank's release job ``rel-1`` ran out of preemption retries and waits for its owner's
decision. After every example: the record reads back whole; its disposition is
pending or decided with a choice; at most one successor was submitted, and only
after a ``resubmit``/``reclassify`` decision; Batch was never asked to submit anything
else.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from support.events import rest_event
from support.lambda_context import LambdaContext
from support.mutations import bodies
from support.principals import ALICE, FRANK

from .conftest import World, exhausted_release_job, submitted

CHOICES = st.builds(
    lambda choice: json.dumps({"choice": choice}),
    st.sampled_from(["resubmit", "reclassify", "abandon", "later", ""]),
)


def _post(job_id: str, principal: str | None, body: str) -> tuple[int, Any]:
    from quotagov.handlers import jobs_api

    request = rest_event(
        "jobs_api-disposition",
        path=f"/jobs/{job_id}/disposition",
        path_parameters={"jobId": job_id},
        body=body,
        principal=principal,
    )
    reply = jobs_api.handler(request, LambdaContext(function_name="JobsApiFunction"))
    return int(reply["statusCode"]), json.loads(reply["body"])


@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    body=st.one_of(CHOICES, CHOICES, bodies({"choice": "resubmit"})),
    job_id=st.sampled_from(["rel-1", "rel-1", "nope", "rel-1-r1", "a" * 200]),
    principal=st.sampled_from([FRANK, FRANK, ALICE, None]),
)
def test_mutated_dispositions(world: World, body: str, job_id: str, principal: str | None) -> None:
    if world.jobs.get("rel-1") is None:
        exhausted_release_job(world, "rel-1")
    status, reply = _post(job_id, principal, body)
    event(f"status {status}")
    assert status in (200, 400, 401, 403, 404, 409, 415), reply
    assert isinstance(reply, dict)
    record = world.jobs.get("rel-1")
    assert record is not None
    disposition = record.disposition.to_item() if record.disposition is not None else {}
    successors = submitted(world.batch)
    assert len(successors) <= 1
    if successors:
        assert disposition.get("choice") in ("resubmit", "reclassify"), disposition
