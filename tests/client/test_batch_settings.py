"""``POST /jobs`` carries the Batch-level settings the SageMaker SDK sends.

``retryStrategy``, ``timeoutConfig`` and ``tags`` are checked for shape (400 with the
field path), against the class's bounds and the reserved tag keys (422, stored
``REFUSED``, nothing sent to Batch), stored on the record and passed to
``SubmitServiceJob``; ``serviceRequestPayload`` may be the JSON string Batch and the
SDK use.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from quotagov.governance.model.job import JobRecord, SubmissionState
from quotagov.governance.routing import RoutingDecision, RoutingInput, route
from quotagov.governance.submission.request import SubmissionRequest
from quotagov.governance.submission.to_batch import service_job_request
from quotagov.policy import Policy, parse_policy
from submission.conftest import policy_text, submission
from support.principals import ALICE, assumed_role

MALLORY = assumed_role("researcher", "mallory")  # a member of no team
RETRY = {
    "attempts": 2,
    "evaluateOnExit": [
        {
            "action": "RETRY",
            "onStatusReason": "Received status from SageMaker: InternalServerError*",
        },
        {"action": "EXIT", "onStatusReason": "*"},
    ],
}


def _route(policy: Policy, request: SubmissionRequest, principal: str) -> RoutingDecision:
    """:func:`route` on a ``POST /jobs`` request by ``principal``."""
    return route(policy, RoutingInput.from_request(request, principal))


def _policy(**exploratory: Any) -> Policy:
    data = yaml.safe_load(policy_text())
    data["workloadClasses"]["exploratory"].update(exploratory)
    return parse_policy(data)


def _request(**changes: Any) -> SubmissionRequest:
    return SubmissionRequest.model_validate(submission(**changes))


def test_settings_within_the_class_bounds_are_accepted_and_reach_submit_service_job() -> None:
    request = _request(
        retryStrategy=RETRY,
        timeoutConfig={"attemptDurationSeconds": 14400},
        tags={"ticket": "GOV-1234"},
    )
    decision = _route(_policy(maxRetryAttempts=3, maxAttemptDurationSeconds=86400), request, ALICE)
    assert decision.accepted, decision.reasons
    record = JobRecord(
        pk="sub-1",
        state=SubmissionState.QUEUED,
        team="research",
        workloadClass="exploratory",
        priorityLevel="standard",
        jobName="resnet-sweep-017",
        serviceRequestPayload=request.serviceRequestPayload.to_json(),
        quotaShareName="background",
        schedulingPriority=10,
        **request.batch_settings(),
    )
    sent = service_job_request(JobRecord.from_item(record.to_item()), "queue-arn")
    assert sent["retryStrategy"] == RETRY
    assert sent["timeoutConfig"] == {"attemptDurationSeconds": 14400}
    assert sent["tags"] == {
        "ticket": "GOV-1234",
        "quotagov:submissionId": "sub-1",
        "quotagov:team": "research",
        "quotagov:workloadClass": "exploratory",
        "quotagov:priorityLevel": "standard",
    }


def test_without_settings_nothing_extra_is_sent() -> None:
    request = _request()
    assert request.batch_settings() == {"retryStrategy": None, "timeoutConfig": None, "tags": None}
    record = JobRecord(
        pk="s", state=SubmissionState.QUEUED, jobName="j", **request.batch_settings()
    )
    sent = service_job_request(record, "q")
    assert "retryStrategy" not in sent and "timeoutConfig" not in sent


def test_attempts_and_timeout_above_the_class_bounds_are_refused_with_each_reason() -> None:
    request = _request(
        retryStrategy={"attempts": 5}, timeoutConfig={"attemptDurationSeconds": 90000}
    )
    decision = _route(_policy(maxRetryAttempts=2, maxAttemptDurationSeconds=86400), request, ALICE)
    assert decision.routing is None
    assert decision.reasons == [
        "retryStrategy.attempts: 5 exceeds class 'exploratory' maximum of 2",
        "timeoutConfig.attemptDurationSeconds: 90000 s exceeds class 'exploratory' maximum "
        "of 86400 s",
    ]


def test_the_default_class_bound_is_three_attempts_and_any_timeout() -> None:
    policy = _policy()
    assert policy.workloadClasses["exploratory"].maxRetryAttempts == 3
    ok = _request(retryStrategy={"attempts": 3}, timeoutConfig={"attemptDurationSeconds": 10**7})
    assert _route(policy, ok, ALICE).accepted
    assert not _route(policy, _request(retryStrategy={"attempts": 4}), ALICE).accepted


@pytest.mark.parametrize(
    "key", ["quotagov:team", "QuotaGov:submissionId", "quotagov:priorityLevel", "aws:createdBy"]
)
def test_tag_keys_reserved_to_quotagov_or_aws_are_refused(key: str) -> None:
    """The attacker (a member of research) tags the job as another team's or level's, to
    be counted elsewhere by the job-state handler and ``history export``."""
    decision = _route(_policy(), _request(tags={key: "applied", "ok": "1"}), ALICE)
    assert decision.routing is None
    assert decision.reasons == [
        f"tags.{key}: tag keys starting with quotagov: or aws: are reserved"
    ]


def test_payload_as_the_json_string_of_batch_and_the_sdk_is_the_same_request() -> None:
    as_object = _request()
    as_string = _request(serviceRequestPayload=json.dumps(submission()["serviceRequestPayload"]))
    assert as_string == as_object


@pytest.mark.parametrize(
    ("changes", "path", "fault"),
    [
        ({"serviceRequestPayload": "{not json"}, ("serviceRequestPayload",), "as JSON"),
        ({"serviceRequestPayload": "[1, 2]"}, ("serviceRequestPayload",), "not list"),
        (
            {"retryStrategy": {"attempts": 11}},
            ("retryStrategy", "attempts"),
            "less than or equal to 10",
        ),
        (
            {"retryStrategy": {"attempts": 0}},
            ("retryStrategy", "attempts"),
            "greater than or equal to 1",
        ),
        (
            {"retryStrategy": {"attempts": 1, "evaluateOnExit": [{"action": "MAYBE"}]}},
            ("retryStrategy", "evaluateOnExit", 0, "action"),
            "'RETRY' or 'EXIT'",
        ),
        (
            {"timeoutConfig": {"attemptDurationSeconds": 0}},
            ("timeoutConfig", "attemptDurationSeconds"),
            "greater than or equal to 1",
        ),
        ({"tags": {"k": "v" * 257}}, ("tags",), "256 allowed"),
        ({"tags": {f"k{i}": "v" for i in range(46)}}, ("tags",), "at most 45"),
    ],
)
def test_malformed_settings_name_the_field(
    changes: dict[str, Any], path: tuple[Any, ...], fault: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        _request(**changes)
    errors = raised.value.errors()
    assert [e["loc"] for e in errors] == [path]
    assert fault in errors[0]["msg"]


@pytest.mark.slow  # a whole local runtime
def test_the_settings_reach_the_simulated_batch_and_a_reserved_tag_reaches_nothing() -> None:
    """Through the API: the stored record and the service job keep the settings; the
    attacker's reserved tag is refused (422, stored REFUSED) and no service job exists."""
    from support.runtime import quiet_runtime

    body = submission(
        retryStrategy=RETRY,
        timeoutConfig={"attemptDurationSeconds": 14400},
        tags={"ticket": "GOV-1234"},
    )
    body["serviceRequestPayload"] = json.dumps(body["serviceRequestPayload"])
    with quiet_runtime() as runtime:
        accepted = runtime.api("POST", "/jobs", principal=ALICE, body=body)
        assert accepted.status == 202, accepted.text
        submission_id = accepted.json()["submissionId"]
        runtime.advance(5)
        view = runtime.api("GET", f"/jobs/{submission_id}", principal=ALICE).json()
        job = runtime.batch.describe_service_job(jobId=view["batchJobId"])
        assert job["retryStrategy"] == RETRY
        assert job["timeoutConfig"] == {"attemptDurationSeconds": 14400}
        assert job["tags"]["ticket"] == "GOV-1234"
        assert job["tags"]["quotagov:submissionId"] == submission_id
        assert json.loads(job["serviceRequestPayload"]) == json.loads(body["serviceRequestPayload"])
        assert (view["retryStrategy"], view["timeoutConfig"], view["tags"]) == (
            RETRY,
            {"attemptDurationSeconds": 14400},
            {"ticket": "GOV-1234"},
        )

        forged = submission(jobName="forged", tags={"quotagov:team": "applied"})
        forged["serviceRequestPayload"]["TrainingJobName"] = "forged"
        refused = runtime.api("POST", "/jobs", principal=ALICE, body=forged)
        assert refused.status == 422
        assert refused.json()["reasons"] == [
            "tags.quotagov:team: tag keys starting with quotagov: or aws: are reserved"
        ]
        runtime.advance(5)
        stored = runtime.api("GET", f"/jobs/{refused.json()['submissionId']}", principal=ALICE)
        assert stored.json()["state"] == "REFUSED"
        names = [
            j["jobName"]
            for status in ("SUBMITTED", "PENDING", "RUNNABLE", "STARTING", "RUNNING")
            for j in runtime.batch.list_service_jobs(jobQueue=runtime.job_queue, jobStatus=status)[
                "jobSummaryList"
            ]
        ]
        assert "forged" not in names and names

        other = runtime.api("POST", "/jobs", principal=MALLORY, body=submission(jobName="x"))
        assert other.status == 403
