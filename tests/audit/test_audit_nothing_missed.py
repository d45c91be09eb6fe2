"""Nothing misses the log: a job submitted around quotagov, foreign
CloudTrail records, other partitions, two changes in one second, an empty map key.
Each test checks the exact stored record (or that nothing was stored)."""

from __future__ import annotations

from typing import Any

import pytest

from audit.support import (
    ACCOUNT,
    CONTROLLER_ROLE,
    PLATFORM_CHANNEL,
    QUEUE_ARN,
    TABLE,
    load_call,
    share_arn,
)
from quotagov.adapters.dynamodb_audit import DynamoDBChainStore, from_item
from quotagov.adapters.dynamodb_known import DynamoDBVersionStore
from quotagov.clock import ManualClock
from quotagov.governance.audit.chain import GENESIS_HASH, record_hash, verify_chain
from quotagov.governance.audit.cloudtrail_calls import CloudTrailApiCall
from quotagov.governance.audit.trail import AuditTrail, ForeignCallError
from quotagov.policy import Policy
from quotagov_tools.batch_simulated import SimulatedBatch
from quotagov_tools.local.fake_slack import FakeSlack
from support.lambda_context import LambdaContext

XL = "ml.g5.xlarge"
JOB = "5b0c1d2e-3f40-4a51-b627-38495a6b7c8d"


def stored(dynamodb: Any, seq: int, chain: str = "ml-gov-queue") -> dict[str, Any]:
    item = dynamodb.get_item(
        TableName=TABLE,
        Key={"pk": {"S": f"CHAIN#{chain}"}, "sk": {"S": f"SEQ#{seq:012d}"}},
        ConsistentRead=True,
    )["Item"]
    record = from_item(item)
    assert (record.pop("pk"), record.pop("sk")) == (f"CHAIN#{chain}", f"SEQ#{seq:012d}")
    return record


def all_items(dynamodb: Any) -> list[dict[str, Any]]:
    return sorted(
        (from_item(i) for i in dynamodb.scan(TableName=TABLE)["Items"]),
        key=lambda i: (i["pk"], i["sk"]),
    )


def changed(call: CloudTrailApiCall, **detail: Any) -> CloudTrailApiCall:
    return CloudTrailApiCall.model_validate({**call.model_dump(mode="json"), **detail})


def test_submit_service_job_outside_quotagov_is_recorded_with_a_finding_and_alerted(
    trail: AuditTrail, dynamodb: Any, slack: FakeSlack
) -> None:
    call = load_call("submit-service-job")

    result = trail.record_call(call)

    assert result.created and result.alerted
    record = stored(dynamodb, 1)
    assert record == result.record
    message = (
        f"service job {JOB} (sneaky-train) submitted to the governed queue ml-gov-queue into "
        "quota share reserved at schedulingPriority 90 outside quotagov: no policy check "
        "(team, workload class, share, priority) was made"
    )
    assert record == {
        "recordType": "CloudTrail",
        "kind": "CHANGE",
        "time": "2026-05-04T11:00:05Z",
        "recordedAt": record["recordedAt"],
        "eventId": call.eventID,
        "requestId": call.requestID,
        "actor": {
            "principalArn": f"arn:aws:sts::{ACCOUNT}:assumed-role/researcher/bob",
            "type": "AssumedRole",
            "sessionIssuerArn": f"arn:aws:iam::{ACCOUNT}:role/researcher",
            "quotagov": False,
            "decisionId": None,
            "decisionAction": None,
        },
        "action": "SubmitServiceJob",
        "resource": {
            "type": "service-job",
            "name": JOB,
            "arn": f"service-job/{JOB}",
            "quotaShareName": "reserved",
        },
        "jobQueue": "ml-gov-queue",
        "requestParameters": call.parameters,
        "error": None,
        "before": None,
        "beforeSource": "none",
        "after": {
            "jobName": "sneaky-train",
            "serviceJobType": "SAGEMAKER_TRAINING",
            "quotaShareName": "reserved",
            "schedulingPriority": 90,
        },
        "difference": [
            {"path": "jobName", "before": None, "after": "sneaky-train"},
            {"path": "quotaShareName", "before": None, "after": "reserved"},
            {"path": "schedulingPriority", "before": None, "after": 90},
            {"path": "serviceJobType", "before": None, "after": "SAGEMAKER_TRAINING"},
        ],
        "findings": [
            {"code": "SUBMITTED_OUTSIDE_QUOTAGOV", "severity": "high", "message": message}
        ],
        "lookupErrors": [],
        "loadedPolicyVersion": None,  # the policy was given, not loaded from SSM
        "chain": "ml-gov-queue",
        "seq": 1,
        "dedupKey": f"event:{call.eventID}",
        "prevHash": GENESIS_HASH,
        "hash": record_hash(record),
    }
    [post] = slack.messages
    assert post.channel == PLATFORM_CHANNEL
    assert "SUBMITTED_OUTSIDE_QUOTAGOV" in post.blocks[2]["text"]["text"]


def test_quotagovs_own_submission_is_recorded_without_a_finding(
    trail: AuditTrail, dynamodb: Any, slack: FakeSlack
) -> None:
    call = load_call("submit-service-job")
    identity = call.userIdentity.model_dump(mode="json")
    identity["arn"] = f"arn:aws:sts::{ACCOUNT}:assumed-role/quotagov-SlackInteractionsRole/s"
    identity["sessionContext"]["sessionIssuer"]["arn"] = CONTROLLER_ROLE
    own = changed(call, userIdentity=identity)

    result = trail.record_call(own)

    assert result.created and not result.alerted
    record = stored(dynamodb, 1)
    assert record["findings"] == [] and record["actor"]["quotagov"] is True
    assert slack.messages == []


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("recipientAccountId", "444455556666", "account 444455556666 Region eu-west-1"),
        ("awsRegion", "us-east-1", "account 111122223333 Region us-east-1"),
    ],
)
def test_a_foreign_account_or_region_never_enters_the_chain(
    trail: AuditTrail, dynamodb: Any, slack: FakeSlack, field: str, value: str, where: str
) -> None:
    """Counted and dropped (the handler answers ``foreign`` and counts
    ``AuditForeignEvents``): not a record, not a marker, not a configuration."""
    call = load_call("update-quota-share")
    foreign = changed(call, **{field: value})
    before = all_items(dynamodb)

    with pytest.raises(ForeignCallError) as refused:
        trail.record_call(foreign)

    assert f"was made in {where}, not the governed queue's (111122223333 eu-west-1)" in str(
        refused.value
    )
    assert all_items(dynamodb) == before == []
    assert slack.messages == []


def test_the_handler_answers_foreign_and_stores_nothing(
    trail: AuditTrail, dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from audit.support import load_event
    from quotagov import composition
    from quotagov.handlers import audit_trail

    event = load_event("update-quota-share")
    event["detail"]["recipientAccountId"] = "444455556666"
    from support.compose import wire

    monkeypatch.setattr(composition.Audit, "audit_trail", property(lambda self: trail))
    wire()  # the audit function as deployed, its trail the fixture's
    try:
        answer = audit_trail.handler(event, LambdaContext())
    finally:
        composition.reset()

    assert answer["status"] == "foreign"
    assert "counted and dropped" in answer["reason"]
    assert all_items(dynamodb) == []


def test_resource_arns_use_the_records_partition(
    chains: DynamoDBChainStore,
    versions: DynamoDBVersionStore,
    batch: SimulatedBatch,
    policy: Policy,
    clock: ManualClock,
    dynamodb: Any,
) -> None:
    cn_queue = "arn:aws-cn:batch:cn-north-1:111122223333:job-queue/ml-gov-queue"
    cn_policy = policy.model_copy(update={"jobQueue": cn_queue})
    trail = AuditTrail(chains=chains, versions=versions, batch=batch, policy=cn_policy, clock=clock)
    call = load_call("update-scheduling-policy")
    identity = call.userIdentity.model_dump(mode="json")
    identity["arn"] = "arn:aws-cn:sts::111122223333:assumed-role/ml-admins/alice"
    identity["sessionContext"]["sessionIssuer"]["arn"] = (
        "arn:aws-cn:iam::111122223333:role/ml-admins"
    )
    params = dict(call.parameters)
    params["arn"] = "arn:aws-cn:batch:cn-north-1:111122223333:scheduling-policy/ml-quota-policy"
    cn_call = changed(call, awsRegion="cn-north-1", userIdentity=identity, requestParameters=params)

    trail.record_call(cn_call)

    record = stored(dynamodb, 1)
    assert record["resource"] == {
        "type": "scheduling-policy",
        "name": "ml-quota-policy",
        "arn": "arn:aws-cn:batch:cn-north-1:111122223333:scheduling-policy/ml-quota-policy",
    }
    assert "arn:aws:" not in str(record["resource"])
    # The partition comes from the Region when the caller has no ARN (an AWS service).
    gov = changed(call, awsRegion="us-gov-west-1", userIdentity={"type": "AWSService"})
    assert gov.partition == "aws-us-gov"


def test_two_updates_of_one_share_in_the_same_second_get_the_right_before_and_after(
    trail: AuditTrail, batch: SimulatedBatch, clock: ManualClock, dynamodb: Any
) -> None:
    """CloudTrail times have one-second resolution: 2 -> 3 then 3 -> 1 within 10:02:09."""
    first = load_call("update-quota-share")
    first = changed(
        first,
        requestParameters={
            "quotaShareArn": share_arn("release"),
            "capacityLimits": [{"capacityUnit": XL, "maxCapacity": 3}],
        },
    )
    second = changed(
        load_call("update-quota-share"),
        eventID="3c4d5e6f-7a8b-4c9d-0e1f-0000000000b2",
        requestID="0d9e8f7a-6b5c-4d3e-2f1a-0000000000b2",
    )
    assert first.eventTime == second.eventTime
    clock.set(first.event_ms / 1000)  # both calls, and both records, in one second
    batch.sync()
    batch.update_quota_share(**first.parameters)
    batch.update_quota_share(**second.parameters)

    trail.record_call(first)
    trail.record_call(second)

    one, two = stored(dynamodb, 1), stored(dynamodb, 2)
    path = f"capacityLimits[{XL}].maxCapacity"
    assert one["difference"] == [{"path": path, "before": 2, "after": 3}]
    assert two["difference"] == [{"path": path, "before": 3, "after": 1}]
    assert two["before"]["capacityLimits"] == [{"capacityUnit": XL, "maxCapacity": 3}]
    assert two["beforeSource"] == "last-known"
    assert two["time"] == one["time"] == "2026-05-04T10:02:09Z"


def test_a_request_parameter_map_with_an_empty_key_is_stored_and_audited(
    trail: AuditTrail, dynamodb: Any, chains: DynamoDBChainStore
) -> None:
    call = load_call("update-job-queue")
    params = {**call.parameters, "tags": {"": "empty key", "team": "ml"}}
    odd = changed(call, requestParameters=params)

    result = trail.record_call(odd)

    assert result.created
    record = stored(dynamodb, 1)
    assert record == result.record
    assert record["requestParameters"]["tags"] == {"": "empty key", "team": "ml"}
    raw = dynamodb.get_item(
        TableName=TABLE, Key={"pk": {"S": "CHAIN#ml-gov-queue"}, "sk": {"S": "SEQ#000000000001"}}
    )["Item"]
    assert raw["requestParameters"]["M"]["tags"]["M"] == {
        "~": {"S": "empty key"},
        "team": {"S": "ml"},
    }
    assert record["hash"] == record_hash(record)
    assert verify_chain(
        "ml-gov-queue", chains.records("ml-gov-queue"), chains.markers("ml-gov-queue")
    ) == (1, None)
    assert QUEUE_ARN.endswith(record["jobQueue"])
