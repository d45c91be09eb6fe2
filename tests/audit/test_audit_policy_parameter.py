"""The governance policy is audited: a write of the policy parameter by anyone becomes
an audit record naming the caller, the change in governance terms and its findings,
with an alert for a high finding (``ssm:PutParameter`` is detected, not refused)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
import yaml

from audit.support import PLATFORM_CHANNEL, POLICY_DOCUMENT, TABLE, load_event
from quotagov import composition
from quotagov.adapters.dynamodb_audit import DynamoDBChainStore
from quotagov.adapters.dynamodb_known import DynamoDBVersionStore
from quotagov.adapters.slack import SlackChatNotifier
from quotagov.adapters.ssm_policy_history import SsmPolicyHistory
from quotagov.clock import ManualClock
from quotagov.governance.audit.chain import verify_chain
from quotagov.governance.audit.review import describe_record
from quotagov.handlers.audit_trail import handler
from quotagov.settings import Settings
from quotagov_tools.local.fake_slack import FakeSlack
from support.aws import QUEUE_ARN, REGION
from support.compose import wire
from support.lambda_context import LambdaContext

PARAMETER = "/quotagov/policy"
MALLORY = "arn:aws:sts::111122223333:assumed-role/developer/mallory"


@pytest.fixture
def ssm(dynamodb: Any) -> Any:
    """moto SSM (inside the audit tests' ``mock_aws``) holding the policy as version 1."""
    client = boto3.client("ssm", region_name=REGION)
    client.put_parameter(Name=PARAMETER, Value=yaml.safe_dump(POLICY_DOCUMENT), Type="String")
    return client


@pytest.fixture
def wired(
    ssm: Any,
    chains: DynamoDBChainStore,
    versions: DynamoDBVersionStore,
    chat: SlackChatNotifier,
    clock: ManualClock,
) -> Iterator[None]:
    """The audit function as deployed: it loads the policy from the parameter itself
    (so it runs what the attacker wrote, or fails to load an invalid one) and seals its
    records with a (moto) KMS HMAC key."""
    import boto3

    kms = boto3.client("kms", region_name="eu-west-1")
    seal_key = kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")
    wire(
        Settings(
            audit_table=TABLE,
            audit_seal_key=seal_key["KeyMetadata"]["KeyId"],
            platform_channel=PLATFORM_CHANNEL,
            policy_parameter=PARAMETER,
            job_queue=QUEUE_ARN,
        ),
        audit_chains=chains,
        audit_versions=versions,
        policy_history=SsmPolicyHistory(ssm),
        chat=chat,
        clock=clock,
    )
    yield
    composition.reset()


def _mallory_adds_herself(ssm: Any) -> None:
    """The attacker holds ssm:PutParameter on the parameter and nothing else of the stack."""
    document = copy.deepcopy(POLICY_DOCUMENT)
    document["teams"]["research"]["members"] = [{"principal": MALLORY, "slackUserId": "U0MAL"}]
    document["teams"]["research"]["directLevels"] = ["standard", "urgent"]
    ssm.put_parameter(Name=PARAMETER, Value=yaml.safe_dump(document), Type="String", Overwrite=True)


@pytest.mark.usefixtures("wired")
def test_a_caller_with_put_parameter_adding_herself_at_urgent_is_recorded_and_alerted(
    ssm: Any, chains: DynamoDBChainStore, slack: FakeSlack
) -> None:
    _mallory_adds_herself(ssm)

    answer = handler(load_event("put-policy-parameter"), LambdaContext())

    assert answer == {
        "status": "recorded",
        "chain": "ml-gov-queue",
        "seq": 1,
        "kind": "CHANGE",
        "findings": ["MEMBER_ADDED", "DIRECT_LEVEL_RAISED"],
    }
    (record,) = chains.records("ml-gov-queue")
    assert record["recordType"] == "PolicyParameter"
    assert record["actor"] == {
        "principalArn": MALLORY,
        "type": "AssumedRole",
        "source": "cloudtrail",
        "quotagov": False,
        "historyUser": "N/A",  # what moto's SSM keeps as LastModifiedUser
    }
    assert record["action"] == "PutParameter"
    assert record["resource"] == {"type": "ssm-parameter", "name": PARAMETER}
    assert (record["policyVersion"], record["previousVersion"]) == (2, 1)
    assert [(c["path"], c["change"], c["item"]) for c in record["difference"]] == [
        ("teams.research.members", "added", MALLORY),
        ("teams.research.directLevels", "added", "urgent"),
    ]
    assert [c["text"] for c in record["difference"]] == [
        f"team research: member {MALLORY} (Slack U0MAL) added",
        "team research: direct level urgent (90) added",
    ]
    assert record["findings"] == [
        {
            "code": "MEMBER_ADDED",
            "severity": "medium",
            "message": f"team research: member {MALLORY} added; they may submit at "
            "standard, urgent and request high, urgent",
        },
        {
            "code": "DIRECT_LEVEL_RAISED",
            "severity": "high",
            "message": "team research: may now set schedulingPriority 90 without approval "
            "(was 10; direct levels standard, urgent)",
        },
    ]
    assert record["lookupErrors"] == []
    assert record["loadedPolicyVersion"] == 2  # a cold function loaded what she wrote
    assert describe_record(record).splitlines() == [
        "#1 2026-05-04T10:20:00Z CHANGE PutParameter ssm-parameter /quotagov/policy",
        f"    by {MALLORY}",
        f"    team research: member {MALLORY} (Slack U0MAL) added",
        "    team research: direct level urgent (90) added",
        f"    ! MEMBER_ADDED [medium] {record['findings'][0]['message']}",
        f"    ! DIRECT_LEVEL_RAISED [high] {record['findings'][1]['message']}",
    ]
    assert verify_chain("ml-gov-queue", chains.records("ml-gov-queue")) == (1, None)
    (alert,) = slack.messages
    assert alert.channel == PLATFORM_CHANNEL
    assert MALLORY in alert.text and "2 finding(s)" in alert.text
    # the policy in force is what she wrote: detection, not refusal
    assert "urgent" in ssm.get_parameter(Name=PARAMETER)["Parameter"]["Value"]


@pytest.mark.usefixtures("wired")
def test_the_same_change_announced_twice_is_one_record(
    ssm: Any, chains: DynamoDBChainStore, slack: FakeSlack
) -> None:
    """CloudTrail and a ``Parameter Store Change`` event of version 2: one record."""
    _mallory_adds_herself(ssm)
    first = handler(load_event("put-policy-parameter"), LambdaContext())
    store_event = {
        "version": "0",
        "id": "c0ffee00-0000-4000-8000-000000000102",
        "detail-type": "Parameter Store Change",
        "source": "aws.ssm",
        "account": "111122223333",
        "time": "2026-05-04T10:20:01Z",
        "region": "eu-west-1",
        "resources": [f"arn:aws:ssm:eu-west-1:111122223333:parameter{PARAMETER}"],
        "detail": {"operation": "Update", "name": PARAMETER, "type": "String"},
    }
    again = handler(store_event, LambdaContext())
    assert again == {**first, "status": "duplicate"}
    assert len(list(chains.records("ml-gov-queue"))) == 1
    assert len(slack.messages) == 1


@pytest.mark.usefixtures("wired")
def test_a_refused_put_is_an_attempt_and_another_parameter_is_rejected(
    ssm: Any, chains: DynamoDBChainStore, slack: FakeSlack
) -> None:
    denied = load_event("put-policy-parameter")
    denied["detail"].update(errorCode="AccessDenied", errorMessage="not authorized")
    del denied["detail"]["responseElements"]
    assert handler(denied, LambdaContext())["kind"] == "ATTEMPT"
    other = load_event("put-policy-parameter")
    other["detail"]["requestParameters"]["name"] = "/somewhere/else"
    assert handler(other, LambdaContext()) == {
        "status": "rejected",
        "reason": "detail: parameter '/somewhere/else' is not the policy parameter "
        "'/quotagov/policy'",
    }
    (attempt,) = chains.records("ml-gov-queue")
    assert (attempt["kind"], attempt["actor"]["principalArn"]) == ("ATTEMPT", MALLORY)
    assert attempt["error"] == {"code": "AccessDenied", "message": "not authorized"}
    assert (attempt["difference"], attempt["findings"]) == ([], [])
    assert slack.messages == []


@pytest.mark.usefixtures("wired")
def test_an_invalid_policy_written_is_a_high_finding(ssm: Any, chains: DynamoDBChainStore) -> None:
    ssm.put_parameter(Name=PARAMETER, Value="teams: [", Type="String", Overwrite=True)
    answer = handler(load_event("put-policy-parameter"), LambdaContext())
    assert answer["findings"] == ["POLICY_INVALID"]
    (record,) = chains.records("ml-gov-queue")
    assert record["findings"][0]["severity"] == "high"
    assert record["findings"][0]["message"].startswith(
        "the new policy is invalid (1 fault(s)): (document): not valid YAML"
    )


@pytest.mark.usefixtures("wired")
def test_an_event_for_a_version_not_yet_written_records_nothing_and_is_retried(
    ssm: Any, chains: DynamoDBChainStore
) -> None:
    """The attacker holds lambda:InvokeFunction on the audit function and
    ssm:PutParameter: she invokes it with a PutParameter event naming the next version
    and a deployer as the caller, before writing the policy herself. The forged event
    records nothing (retried: the history has no such version), so it cannot take the
    version's one record; her real event is then recorded in her name with its findings."""
    from quotagov.governance.ports.policy_history import PolicyHistoryError

    forged = copy.deepcopy(load_event("put-policy-parameter"))
    forged["id"] = "forged-event"
    forged["detail"]["eventID"] = "forged-event-id"
    forged["detail"]["userIdentity"]["arn"] = "arn:aws:sts::111122223333:assumed-role/deployer/ci"
    with pytest.raises(PolicyHistoryError, match="not in its history"):
        handler(forged, LambdaContext())
    assert list(chains.records("ml-gov-queue")) == []

    _mallory_adds_herself(ssm)
    answer = handler(load_event("put-policy-parameter"), LambdaContext())

    assert answer["status"] == "recorded"
    assert answer["findings"] == ["MEMBER_ADDED", "DIRECT_LEVEL_RAISED"]
    (record,) = chains.records("ml-gov-queue")
    assert record["actor"]["principalArn"] == MALLORY
