"""``AuditFunction`` handler: real EventBridge envelopes in, records out; malformed
events are rejected with the field at fault; the wiring builds the audit sink."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from audit.support import (
    CONTROLLER_ROLE,
    PLATFORM_CHANNEL,
    QUEUE_ARN,
    TABLE,
    load_call,
    load_event,
)
from quotagov import composition
from quotagov.adapters.dynamodb_audit import DynamoDBChainStore
from quotagov.adapters.dynamodb_known import DynamoDBVersionStore
from quotagov.adapters.slack import SlackChatNotifier
from quotagov.clock import ManualClock
from quotagov.governance.audit.chain import verify_chain
from quotagov.governance.audit.cloudtrail_calls import AUDITED_CALLS, CloudTrailApiCall
from quotagov.governance.audit.decisions import DecisionLog
from quotagov.governance.audit.trail import AuditEventError, AuditTrail
from quotagov.governance.ports import ControllerDecision
from quotagov.handlers.audit_trail import BatchApiCallEvent, LambdaInvokeEvent, handler
from quotagov.policy import Policy
from quotagov.settings import Settings
from quotagov_tools.batch_simulated import SimulatedBatch
from quotagov_tools.local.fake_slack import FakeSlack
from support.compose import complete, wire
from support.events import EVENTS
from support.lambda_context import LambdaContext


@pytest.fixture
def wired(
    dynamodb: Any,
    chains: DynamoDBChainStore,
    versions: DynamoDBVersionStore,
    batch: SimulatedBatch,
    policy: Policy,
    chat: SlackChatNotifier,
    clock: ManualClock,
) -> Iterator[None]:
    import boto3

    kms = boto3.client("kms", region_name="eu-west-1")
    seal_key = kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")
    settings = Settings(
        audit_table=TABLE,
        audit_seal_key=seal_key["KeyMetadata"]["KeyId"],
        platform_channel=PLATFORM_CHANNEL,
        controller_principals=f"{CONTROLLER_ROLE}, arn:aws:iam::111122223333:role/other",
    )
    wire(
        settings,
        audit_chains=chains,
        audit_versions=versions,
        batch=batch,
        policy=policy,
        chat=chat,
        clock=clock,
    )
    yield
    composition.reset()


@pytest.mark.usefixtures("wired")
def test_event_is_recorded_once_and_risk_counted(
    chains: DynamoDBChainStore, slack: FakeSlack, capsys: pytest.CaptureFixture[str]
) -> None:
    event = load_event("update-quota-share-borrow")

    first = handler(event, LambdaContext())
    again = handler(copy.deepcopy(event), LambdaContext())

    assert first == {
        "status": "recorded",
        "chain": "ml-gov-queue",
        "seq": 1,
        "kind": "CHANGE",
        "findings": ["BORROW_LIMIT_RAISED", "POLICY_DRIFT"],
    }
    assert again == {**first, "status": "duplicate"}
    assert [m.channel for m in slack.messages] == [PLATFORM_CHANNEL]
    assert verify_chain("ml-gov-queue", chains.records("ml-gov-queue")) == (1, None)
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "_aws" in line]
    names = {
        m["Name"]
        for blob in emitted
        for d in blob["_aws"]["CloudWatchMetrics"]
        for m in d["Metrics"]
    }
    assert {"AuditRecords", "RiskyChanges", "AuditDuplicates"} <= names


@pytest.mark.usefixtures("wired")
def test_failed_call_event_is_an_attempt() -> None:
    answer = handler(load_event("update-quota-share-denied"), LambdaContext())

    assert answer == {
        "status": "recorded",
        "chain": "ml-gov-queue",
        "seq": 1,
        "kind": "ATTEMPT",
        "findings": [],
    }


@pytest.mark.usefixtures("wired")
@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda e: e["detail"].pop("eventID"), "detail.eventID: Field required"),
        (
            lambda e: e["detail"].update(eventSource="ecs.amazonaws.com"),
            "detail.eventSource: Input should be 'batch.amazonaws.com'",
        ),
        (lambda e: e.pop("version"), "version: Field required"),
        (
            lambda e: e["detail"].update(eventName="SubmitJob"),
            "detail.eventName: 'SubmitJob' is not an audited call",
        ),
        (
            lambda e: e["detail"]["requestParameters"].pop("quotaShareArn"),
            "detail.requestParameters.quotaShareArn: missing in UpdateQuotaShare",
        ),
    ],
)
def test_malformed_event_is_rejected_naming_the_field(
    change: Any, reason: str, chains: DynamoDBChainStore
) -> None:
    event = load_event("update-quota-share")
    change(event)

    answer = handler(event, LambdaContext())

    assert answer["status"] == "rejected"
    assert answer["reason"].startswith(reason)
    assert chains.chains() == []


def test_the_audit_function_records_decisions_through_its_own_writer(
    dynamodb: Any, clock: ManualClock
) -> None:
    services = composition.Audit(
        complete(Settings(audit_table=TABLE)), clock=clock, audit_sealer=None
    )
    try:
        sink = services.decision_log
        assert isinstance(sink, DecisionLog)
        decision = ControllerDecision(
            action="SubmissionRefused",
            actor="quotagov",
            job_queue=QUEUE_ARN,
            resource="sub-0042",
            decision_id="refuse-sub-0042",
            details={"reason": "class scheduled may not use share research"},
        )
        sink.record_decision(decision)
        sink.record_decision(decision)  # the same decision id: one record
        records = list(services.audit_chains.records("ml-gov-queue"))
    finally:
        composition.reset()

    assert len(records) == 1
    assert records[0]["kind"] == "DECISION"
    assert records[0]["action"] == "SubmissionRefused"
    assert records[0]["details"] == {"reason": "class scheduled may not use share research"}
    assert records[0]["time"] == "2026-05-04T10:00:00Z"


def test_the_audit_function_without_its_table_fails_at_cold_start_naming_it() -> None:
    with pytest.raises(composition.MissingSettingsError, match=r"AuditFunction: .*AUDIT_TABLE"):
        composition.Audit(dataclasses.replace(complete(), audit_table=""))


def test_misconfigured_slack_still_records(
    dynamodb: Any,
    chains: DynamoDBChainStore,
    versions: DynamoDBVersionStore,
    batch: SimulatedBatch,
    policy: Policy,
    clock: ManualClock,
) -> None:
    # An unprovisioned SLACK_SECRET_ARN: building the chat notifier fails.
    wire(
        Settings(audit_table=TABLE, platform_channel=PLATFORM_CHANNEL),
        audit_chains=chains,
        audit_versions=versions,
        audit_sealer=None,
        batch=batch,
        policy=policy,
        clock=clock,
    )
    try:
        answer = handler(load_event("update-quota-share-borrow"), LambdaContext())
    finally:
        composition.reset()

    assert answer["status"] == "recorded"
    assert answer["findings"] == ["BORROW_LIMIT_RAISED", "POLICY_DRIFT"]
    assert len(list(chains.records("ml-gov-queue"))) == 1


CLOUDTRAIL_SAMPLES = sorted(
    p
    for p in EVENTS.glob("audit_trail-*.json")
    if '"Records"' not in p.read_text()
    and '"aws.ssm"' not in p.read_text()
    and '"aws.lambda"' not in p.read_text()
)  # the policy parameter's (aws.ssm) sample: tests/audit/test_audit_policy_parameter.py


def test_the_direct_invocation_sample_is_a_lambda_invoke_data_event() -> None:
    """``audit_trail-direct-invoke.json``: a developer's Invoke of JobsApiFunction, as a
    trail logging Lambda data events delivers it (a DIRECT_INVOCATION when recorded)."""
    event = LambdaInvokeEvent.model_validate_json(
        (EVENTS / "audit_trail-direct-invoke.json").read_text()
    )
    assert (event.source, event.detail_type) == ("aws.lambda", "AWS API Call via CloudTrail")
    call = event.detail
    assert (call.eventSource, call.eventName) == ("lambda.amazonaws.com", "Invoke")
    assert call.function_name == "quotagov-JobsApiFunction-1A2B3C4D5E6F"
    assert not call.by_trigger
    assert call.userIdentity.issuer_arn == "arn:aws:iam::111122223333:role/developer"


@pytest.mark.parametrize("path", CLOUDTRAIL_SAMPLES, ids=lambda p: p.stem)
def test_every_sample_event_is_an_audited_cloudtrail_call(path: Path) -> None:
    event = BatchApiCallEvent.model_validate_json(path.read_text())

    assert event.source == "aws.batch"
    assert event.detail_type == "AWS API Call via CloudTrail"
    assert event.detail.eventName in AUDITED_CALLS
    assert event.detail.eventSource == "batch.amazonaws.com"
    assert event.detail.eventID and event.detail.userIdentity.arn


def _changed(name: str, path: list[str], value: Any) -> dict[str, Any]:
    """Event ``name`` with ``detail.requestParameters.<path>`` set to ``value``."""
    event = copy.deepcopy(load_event(name))
    target = event["detail"]["requestParameters"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return event


WRONG_TYPES = [
    (
        "update-quota-share-borrow",
        ["resourceSharingConfiguration"],
        "LEND",
        "resourceSharingConfiguration: 'LEND' is not an object",
    ),
    (
        "update-quota-share-borrow",
        ["resourceSharingConfiguration", "borrowLimit"],
        "lots",
        "resourceSharingConfiguration.borrowLimit: 'lots' is not a whole number",
    ),
    (
        "update-quota-share-borrow",
        ["resourceSharingConfiguration", "strategy"],
        ["LEND"],
        "resourceSharingConfiguration.strategy: ['LEND'] is not a string",
    ),
    (
        "update-quota-share-borrow",
        ["capacityLimits"],
        "ml.g5.xlarge=4",
        "capacityLimits: 'ml.g5.xlarge=4' is not a list",
    ),
    (
        "update-quota-share-borrow",
        ["capacityLimits"],
        [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": "4"}],
        "capacityLimits[0].maxCapacity: '4' is not a whole number",
    ),
    (
        "update-quota-share-borrow",
        ["capacityLimits"],
        [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 4}, None],
        "capacityLimits[1]: None is not an object",
    ),
    (
        "update-quota-share-borrow",
        ["capacityLimits"],
        [{"maxCapacity": 4}],
        "capacityLimits[0].capacityUnit: None is not a string",
    ),
    (
        "create-quota-share",
        ["preemptionConfiguration", "inSharePreemption"],
        True,
        "preemptionConfiguration.inSharePreemption: True is not a string",
    ),
    ("update-quota-share-borrow", ["state"], ["DISABLED"], "state: ['DISABLED'] is not a string"),
    ("update-quota-share-borrow", ["quotaShareArn"], 5, "quotaShareArn: 5 is not a string"),
    (
        "update-service-job",
        ["schedulingPriority"],
        "high",
        "schedulingPriority: 'high' is not a whole number",
    ),
    ("terminate-service-job", ["jobId"], 7, "jobId: 7 is not a string"),
]


@pytest.mark.usefixtures("wired")
@pytest.mark.parametrize(("name", "path", "value", "fault"), WRONG_TYPES)
def test_successful_call_with_wrong_typed_parameters_is_rejected_naming_the_field(
    name: str, path: list[str], value: Any, fault: str, chains: DynamoDBChainStore
) -> None:
    answer = handler(_changed(name, path, value), LambdaContext())

    assert answer == {"status": "rejected", "reason": f"detail: requestParameters.{fault}"}
    assert chains.chains() == []


@pytest.mark.usefixtures("wired")
def test_failed_call_with_wrong_typed_parameters_is_still_an_attempt() -> None:
    event = _changed("update-quota-share-denied", ["capacityLimits"], [{"maxCapacity": "x"}])

    answer = handler(event, LambdaContext())

    assert (answer["status"], answer["kind"], answer["findings"]) == ("recorded", "ATTEMPT", [])


@pytest.mark.usefixtures("wired")
@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["schedulingPriority"], None),
        (["schedulingPriority"], 90.0),
    ],
)
def test_null_or_integral_float_priority_is_recorded(path: list[str], value: Any) -> None:
    answer = handler(_changed("update-service-job", path, value), LambdaContext())

    assert answer["status"] == "recorded"


def test_record_call_refuses_an_unvalidated_call_with_wrong_types(trail: AuditTrail) -> None:
    call = load_call("update-service-job")
    bad = call.model_copy(
        update={"requestParameters": {**call.parameters, "schedulingPriority": "high"}}
    )

    with pytest.raises(AuditEventError) as raised:
        trail.record_call(bad)

    assert str(raised.value) == (
        "detail.requestParameters.schedulingPriority: 'high' is not a whole number"
    )


def test_parsing_refuses_wrong_types_with_a_validation_error() -> None:
    detail = _changed("update-quota-share-borrow", ["capacityLimits"], [None])["detail"]

    with pytest.raises(ValidationError) as raised:
        CloudTrailApiCall.model_validate(detail)

    assert raised.value.errors()[0]["msg"] == (
        "requestParameters.capacityLimits[0]: None is not an object"
    )
