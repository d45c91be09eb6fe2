"""Routing rules in isolation: share choice, capacity, borrowing, in-share preemption."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from quotagov.governance.routing import (
    NotATeamMemberError,
    RoutingDecision,
    RoutingInput,
    max_instances,
    route,
)
from quotagov.governance.submission.request import SubmissionRequest
from quotagov.policy import Policy, parse_policy
from support.principals import ALICE, DAVE

from .conftest import policy_text, submission, training_payload


def _route(policy: Policy, request: SubmissionRequest, principal: str) -> RoutingDecision:
    """:func:`route` on a ``POST /jobs`` request by ``principal``."""
    return route(policy, RoutingInput.from_request(request, principal))


def _policy(edit: Any = None, *, validate: bool = True) -> Policy:
    data = yaml.safe_load(policy_text())
    if edit:
        edit(data)
    return parse_policy(data) if validate else Policy.model_validate(data)


def _request(**changes: Any) -> SubmissionRequest:
    return SubmissionRequest.model_validate(submission(**changes))


def test_first_share_of_the_class_that_fits_is_chosen() -> None:
    decision = _route(_policy(), _request(), ALICE)
    assert decision.accepted
    assert decision.routing is not None
    assert decision.routing.quotaShareName == "background"
    assert decision.routing.schedulingPriority == 10
    assert decision.routing.preemptionRetriesBeforeTermination == 1
    assert decision.routing.ownerSlackUserId == "U0ALICE"


def test_job_larger_than_a_share_can_hold_goes_to_the_next_share() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["workloadClasses"]["exploratory"]["maxInstanceCount"] = 4
        background = data["quotaShares"][0]
        background["resourceSharingConfiguration"]["borrowLimit"] = 100  # 1 own + 1 borrowed
        data["quotaShares"][1]["capacityLimits"][0]["maxCapacity"] = 3

    payload = training_payload(ResourceConfig={"InstanceType": "ml.g5.xlarge", "InstanceCount": 3})
    decision = _route(_policy(edit), _request(serviceRequestPayload=payload), ALICE)
    assert decision.routing is not None and decision.routing.quotaShareName == "medium"


def test_job_no_share_can_ever_hold_is_refused_with_each_share() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["workloadClasses"]["exploratory"]["maxInstanceCount"] = 4
        data["quotaShares"][0]["resourceSharingConfiguration"]["borrowLimit"] = 100

    payload = training_payload(ResourceConfig={"InstanceType": "ml.g5.xlarge", "InstanceCount": 3})
    decision = _route(_policy(edit), _request(serviceRequestPayload=payload), ALICE)
    assert decision.reasons == [
        "serviceRequestPayload.ResourceConfig.InstanceCount: 3 instances of ml.g5.xlarge exceed "
        "what share 'background' can ever hold (2: maxCapacity 1, strategy LEND_AND_BORROW)",
        "serviceRequestPayload.ResourceConfig.InstanceCount: 3 instances of ml.g5.xlarge exceed "
        "what share 'medium' can ever hold (1: maxCapacity 1, strategy LEND)",
    ]


def test_non_checkpointing_job_into_share_with_in_share_preemption_is_refused() -> None:
    """A policy changed without validation (class into an in-share-preemption share)."""

    def edit(data: dict[str, Any]) -> None:
        data["workloadClasses"]["scheduled"]["shares"] = ["background"]

    payload = training_payload("nightly")
    del payload["CheckpointConfig"]
    request = _request(
        team="applied",
        workloadClass="scheduled",
        priorityLevel="low",
        serviceRequestPayload=payload,
    )
    decision = _route(_policy(edit, validate=False), request, DAVE)
    assert decision.reasons == [
        "quotaShareName: the job does not checkpoint but share 'background' has in-share "
        "preemption ENABLED: a higher-priority job of the share could stop it and all its "
        "work would be lost"
    ]


def test_unknown_team_and_non_member_are_forbidden() -> None:
    with pytest.raises(NotATeamMemberError, match="team 'ghosts'"):
        _route(_policy(), _request(team="ghosts"), ALICE)
    with pytest.raises(NotATeamMemberError, match="not a member of team 'applied'"):
        _route(_policy(), _request(team="applied"), ALICE)


@pytest.mark.parametrize(
    ("strategy", "borrow", "expected"),
    [
        ("RESERVE", None, 4),
        ("LEND", None, 4),
        ("LEND_AND_BORROW", None, None),
        ("LEND_AND_BORROW", -1, None),
        ("LEND_AND_BORROW", 150, 10),
        ("LEND_AND_BORROW", 0, 4),
    ],
)
def test_max_instances_follows_borrow_limit(
    strategy: str, borrow: int | None, expected: int | None
) -> None:
    def edit(data: dict[str, Any]) -> None:
        share = data["quotaShares"][0]
        share["capacityLimits"][0]["maxCapacity"] = 4
        share["resourceSharingConfiguration"] = {"strategy": strategy}
        if borrow is not None:
            share["resourceSharingConfiguration"]["borrowLimit"] = borrow

    share = _policy(edit).share("background")
    assert max_instances(share, "ml.g5.xlarge") == expected
    assert max_instances(share, "ml.p5.48xlarge") == 0
