"""Attacks on the successor a disposition submits, by a caller with the Slack function's
table rights.

The Slack function records an owner's disposition choice with ``dynamodb:UpdateItem``
on the jobs table; UpdateItem can write any attribute. The apply function then builds
the successor from that job record and calls ``SubmitServiceJob`` with
``iam:PassRole``. These tests are the attacker: they edit the job record (another
team's execution role, a priority no level gives, a share the class may not use, a
principal outside the team) before the owner's genuine choice is settled, and check
that nothing reached Batch, no successor was stored and the refusal is audited.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import boto3
import pytest

from quotagov.governance.apply_messages import parse_message
from quotagov.governance.dispositions import decide_disposition, settle_disposition
from support.principals import ALICE

from .conftest import TABLE, World, exhausted_release_job, submitted
from .test_disposition_handoff import RecordingHandoff

RESEARCH_ROLE = "arn:aws:iam::111122223333:role/sm-exec-research"


def _edit(**attributes: Any) -> None:
    """``UpdateItem`` rel-1 as the Slack function's role may."""
    table = boto3.resource("dynamodb", region_name="eu-west-1").Table(TABLE)
    paths = [".".join(f"#{p}" for p in name.split(".")) for name in attributes]
    table.update_item(
        Key={"pk": "rel-1"},
        UpdateExpression="SET " + ", ".join(f"{p} = :v{i}" for i, p in enumerate(paths)),
        ExpressionAttributeNames={f"#{p}": p for name in attributes for p in name.split(".")},
        ExpressionAttributeValues={f":v{i}": v for i, v in enumerate(attributes.values())},
    )


def _payload_with_role(world: World, role: str) -> str:
    import json

    item = world.store.get("rel-1")
    assert item is not None
    payload = json.loads(item["serviceRequestPayload"])
    payload["RoleArn"] = role
    return json.dumps(payload, sort_keys=True)


EDITS: dict[str, Any] = {
    "another-teams-role": lambda w: {"serviceRequestPayload": _payload_with_role(w, RESEARCH_ROLE)},
    "level-the-team-lacks": lambda w: {"priorityLevel": "high", "schedulingPriority": 50},
    "share-the-class-may-not-use": lambda w: {"disposition.targetShare": "background"},
    "principal-outside-the-team": lambda w: {"principal": ALICE},
    "team-edited": lambda w: {"team": "research"},
    "cap-bypassed": lambda w: {"resubmitCount": 5},
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edited_job_record_gets_no_successor(world: World, edit: str) -> None:
    exhausted_release_job(world, "rel-1")
    handoff = RecordingHandoff()
    recording = dataclasses.replace(world.disposition_deps(), handoff=handoff)
    # the owner's genuine click, recorded by the Slack function ...
    decide_disposition("rel-1", "disposition_resubmit", "U0FRANK", deps=recording, source="slack")
    # ... and the attacker's edit of the record before the apply function acts on it
    _edit(**EDITS[edit](world))

    applying = world.disposition_deps()
    assert [parse_message(m).kind for m in handoff.sent] == ["disposition"]
    settled = settle_disposition("rel-1", applying)

    assert submitted(world.batch) == []
    assert settled is not None and settled.status == "abandoned"
    item = world.store.get("rel-1")
    assert item is not None
    disposition = item["disposition"]
    assert disposition["status"] == "abandoned"
    assert str(disposition["lastError"]).startswith("successor refused by the policy: ")
    assert world.store.get(str(disposition["successorId"])) is None
    abandoned = [d for d in world.audit.decisions if d.action == "DispositionAbandoned"]
    assert len(abandoned) == 1 and "jobId" not in abandoned[0].details
    assert abandoned[0].details["refusal"] == str(disposition["lastError"])


def test_an_edited_priority_is_not_what_the_successor_gets(world: World) -> None:
    """The successor's schedulingPriority comes from the policy (its level now), not
    from the record."""
    exhausted_release_job(world, "rel-1")
    _edit(schedulingPriority=9999)
    outcome = decide_disposition(
        "rel-1", "disposition_resubmit", "U0FRANK", deps=world.disposition_deps()
    )
    assert outcome.status == "applied"
    [request] = submitted(world.batch)
    assert request["schedulingPriority"] == 10  # release's level 'standard'


def test_a_successor_written_ahead_by_another_role_is_not_submitted(world: World) -> None:
    """The successor's id is deterministic: an item put there first with another team's
    role is the one apply would find; it is held to the policy too."""
    exhausted_release_job(world, "rel-1")
    handoff = RecordingHandoff()
    recording = dataclasses.replace(world.disposition_deps(), handoff=handoff)
    decide_disposition("rel-1", "disposition_resubmit", "U0FRANK", deps=recording, source="slack")
    item = world.store.get("rel-1")
    assert item is not None
    successor_id = str(item["disposition"]["successorId"])
    forged = {
        k: v for k, v in item.items() if k not in ("disposition", "jobState", "jobStateFacts")
    }
    forged.update(
        pk=successor_id,
        state="QUEUED",
        batchJobId=None,
        serviceRequestPayload=_payload_with_role(world, RESEARCH_ROLE),
    )
    boto3.resource("dynamodb", region_name="eu-west-1").Table(TABLE).put_item(
        Item={k: v for k, v in forged.items() if v is not None}
    )

    settled = settle_disposition("rel-1", world.disposition_deps())

    assert submitted(world.batch) == []
    assert settled is not None and settled.status == "abandoned"
