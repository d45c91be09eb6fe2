"""Routing runs once per submission, on the one :class:`RoutingInput`.

``POST /jobs`` routes the request once (``receive_submission``) and stores the
fingerprint of the policy it routed under; the submit worker routes the stored record
again only when the policy it holds has another fingerprint (``submit_to_batch``), and
nothing else on the way calls :func:`~quotagov.governance.routing.route`. The input
built from the request and the one rebuilt from the stored record are the same, so both
steps judge the same facts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from quotagov.governance import routing
from quotagov.governance.model.job import SubmissionState
from quotagov.governance.routing import RoutingDecision, RoutingInput
from quotagov.governance.submission import receive, to_batch
from quotagov.governance.submission.request import SubmissionRequest
from quotagov.policy import Policy, parse_policy
from support.principals import ALICE

from .api import post_jobs
from .conftest import Stack, policy_text, submission
from .sqs_driver import drain


def _counting(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Counter[str], list[RoutingInput]]:
    """Wrap every module's ``route`` name; count calls by caller module, keep inputs."""
    calls: Counter[str] = Counter()
    inputs: list[RoutingInput] = []
    real = routing.route

    def wrapped(module: str) -> Callable[..., RoutingDecision]:
        def route(policy: Any, job: RoutingInput, *args: Any) -> RoutingDecision:
            calls[module] += 1
            inputs.append(job)
            return real(policy, job, *args)

        return route

    monkeypatch.setattr(receive, "route", wrapped("receive"))
    monkeypatch.setattr(to_batch, "route", wrapped("to_batch"))
    monkeypatch.setattr(routing, "route", wrapped("elsewhere"))
    return calls, inputs


def test_each_submission_is_routed_once(
    stack: Stack, batch: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls, _ = _counting(monkeypatch)
    replies = [post_jobs(submission(clientRequestId=f"sweep-{i}"))[1] for i in range(3)]
    assert calls == Counter({"receive": 3})

    assert drain(stack).failures == []
    assert calls == Counter({"receive": 3})  # the worker holds the same policy
    for reply in replies:
        record = stack.jobs.get(reply["submissionId"])
        assert record is not None and record.state is SubmissionState.SUBMITTED
        assert record.routedUnder == routing.policy_fingerprint(_policy())


def test_a_policy_changed_before_the_worker_routes_the_record_again_and_refuses_it(
    stack: Stack, batch: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The level the submission asked for is gone from the policy the worker holds: the
    worker routes the stored record again (once) and fails it with the policy's reason."""
    calls, inputs = _counting(monkeypatch)
    reply = post_jobs(submission(clientRequestId="changed-1"))[1]
    changed = yaml.safe_load(policy_text())
    changed["teams"]["research"]["directLevels"] = ["low"]  # standard is no longer direct
    stack.put_policy(yaml.safe_dump(changed))
    assert drain(stack).failures == []
    assert calls == Counter({"receive": 1, "to_batch": 1})
    assert inputs[0] == inputs[1]  # the worker judged the facts the API judged
    record = stack.jobs.get(reply["submissionId"])
    assert record is not None and record.state is SubmissionState.FAILED
    assert record.batchJobId is None
    assert len(record.reasons) == 1
    assert record.reasons[0].startswith("policy changed since the submission was accepted:")
    assert "standard" in record.reasons[0]


def test_a_retried_post_is_not_routed_again(
    stack: Stack, batch: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same ``clientRequestId`` again: routed (the answer is compared), stored once."""
    calls, _ = _counting(monkeypatch)
    first = post_jobs(submission(clientRequestId="sweep-1"))[1]
    again = post_jobs(submission(clientRequestId="sweep-1"))[1]
    assert first["submissionId"] == again["submissionId"]
    assert drain(stack).failures == []
    # one routing per POST; the worker holds the policy the record was routed under
    assert calls == Counter({"receive": 2})


def test_the_record_rebuilds_the_requests_routing_input() -> None:
    request = SubmissionRequest.model_validate(
        submission(
            quotaShareName="background",
            retryStrategy={"attempts": 2},
            timeoutConfig={"attemptDurationSeconds": 3600},
            tags={"ticket": "GOV-1"},
        )
    )
    decision = routing.route(_policy(), RoutingInput.from_request(request, ALICE))
    record = receive._record_for(request, ALICE, "sub-1", 0, "api", decision)
    from_request = RoutingInput.from_request(request, ALICE)
    assert RoutingInput.from_record(record) == from_request
    assert from_request == RoutingInput(
        principal=ALICE,
        team="research",
        workloadClass="exploratory",
        priorityLevel="standard",
        quotaShareName="background",
        instanceType="ml.g5.xlarge",
        instanceCount=1,
        roleArn=request.serviceRequestPayload.RoleArn,
        checkpoints=True,
        checkpointIntervalSeconds=600,
        retryAttempts=2,
        attemptDurationSeconds=3600,
        tagKeys=("ticket",),
    )


def test_a_successor_is_routed_to_its_target_share_at_its_escalated_level() -> None:
    """``successor=True``: the record's ``quotaShareName`` (the disposition's target), not
    the share first asked for, and a level the team reaches only by escalation."""
    request = SubmissionRequest.model_validate(submission(quotaShareName="background"))
    decision = routing.route(_policy(), RoutingInput.from_request(request, ALICE))
    record = receive._record_for(request, ALICE, "sub-1", 0, "api", decision)
    escalated = record.model_copy(update={"quotaShareName": "medium", "priorityLevel": "high"})

    successor = RoutingInput.from_record(escalated, successor=True)
    assert (successor.quotaShareName, successor.escalatedLevelAllowed) == ("medium", True)
    routed = routing.route(_policy(), successor).routing
    assert routed is not None
    assert (routed.quotaShareName, routed.schedulingPriority) == ("medium", 50)
    # the same record as a new submission: its own share, and 'high' needs an escalation
    resubmitted = routing.route(_policy(), RoutingInput.from_record(escalated))
    assert resubmitted.routing is None
    assert resubmitted.reasons == [
        "priorityLevel: level 'high' needs an approved escalation; submit at one of "
        "standard and request 'high' with POST /jobs/{jobId}/escalations"
    ]


@pytest.mark.parametrize(
    ("payload", "fault"),
    [
        ("not json", "serviceRequestPayload: not JSON"),
        ("[1]", "serviceRequestPayload: not a JSON object"),
        ('{"RoleArn": "r"}', "serviceRequestPayload.ResourceConfig: missing or not an object"),
        (
            '{"ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": "2"}}',
            "serviceRequestPayload.ResourceConfig.InstanceCount: not an integer",
        ),
    ],
)
def test_an_unreadable_stored_payload_is_refused_naming_the_field(payload: str, fault: str) -> None:
    request = SubmissionRequest.model_validate(submission())
    decision = routing.route(_policy(), RoutingInput.from_request(request, ALICE))
    record = receive._record_for(request, ALICE, "sub-1", 0, "api", decision)
    with pytest.raises(ValueError, match=f"^{fault}"):
        RoutingInput.from_record(record.model_copy(update={"serviceRequestPayload": payload}))


def _policy() -> Policy:
    return parse_policy(yaml.safe_load(policy_text()))
