"""Batch calls made through the runtime reach the audit function as CloudTrail events."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from decimal import Decimal

import pytest

from quotagov.governance.ports import BatchClientError
from quotagov_tools.local.cloudtrail import cloudtrail_envelope, user_identity
from quotagov_tools.local.invoker import function_principal
from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions

GRACE = "arn:aws:sts::111122223333:assumed-role/ml-admins/grace"


@pytest.fixture(scope="module")
def runtime() -> Iterator[LocalRuntime]:
    with contextlib.redirect_stdout(io.StringIO()):
        rt = LocalRuntime(RuntimeOptions()).start()
    try:
        yield rt
    finally:
        rt.stop()


def test_user_identity_of_an_assumed_role_and_an_iam_user() -> None:
    role = user_identity(GRACE)
    assert role["type"] == "AssumedRole"
    assert role["arn"] == GRACE
    assert role["principalId"].endswith(":grace")
    assert role["sessionContext"]["sessionIssuer"]["arn"] == (
        "arn:aws:iam::111122223333:role/ml-admins"
    )
    user = user_identity("arn:aws:iam::111122223333:user/ops")
    assert (user["type"], user["userName"]) == ("IAMUser", "ops")


def test_failed_call_carries_error_code_and_null_response() -> None:
    error = BatchClientError("UpdateQuotaShare", "ClientException", "share not found")
    envelope = cloudtrail_envelope(
        event_name="UpdateQuotaShare",
        principal_arn=GRACE,
        request={"quotaShareArn": "arn"},
        response=None,
        at=1777885200.0,
        error=error,
    )
    detail = envelope["detail"]
    assert envelope["detail-type"] == "AWS API Call via CloudTrail"
    assert envelope["source"] == "aws.batch" and envelope["time"] == "2026-05-04T09:00:00Z"
    assert (detail["errorCode"], detail["errorMessage"]) == ("ClientException", "share not found")
    assert detail["responseElements"] is None
    assert detail["eventSource"] == "batch.amazonaws.com" and detail["readOnly"] is False


def test_admin_quota_share_change_is_audited_with_its_actor_and_difference(
    runtime: LocalRuntime,
) -> None:
    before = len(runtime.audit_records())
    share = f"{runtime.job_queue}/quota-share/medium"
    with contextlib.redirect_stdout(io.StringIO()):
        runtime.admin_batch(
            GRACE,
            "UpdateQuotaShare",
            {
                "quotaShareArn": share,
                "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}],
            },
        )
    # held for the 300 s settling window, then written by the release schedule
    assert len(runtime.audit_records()) == before
    runtime.advance(360)
    records = runtime.audit_records()
    assert len(records) == before + 1
    record = records[-1]
    assert record["action"] == "UpdateQuotaShare"
    assert record["actor"]["principalArn"] == GRACE
    assert record["actor"]["quotagov"] is False
    assert record["resource"]["arn"] == share
    assert record["difference"] == [
        {
            "path": "capacityLimits[ml.g5.xlarge].maxCapacity",
            "before": Decimal("1"),
            "after": Decimal("2"),
        }
    ]
    assert [f["code"] for f in record["findings"]] == ["POLICY_DRIFT"]
    delivered = [i for i in runtime.invocations if i.function == "AuditFunction"]
    triggers = {i.trigger for i in delivered if i.ok}
    assert "eventbridge AWS API Call via CloudTrail" in triggers  # held on delivery
    assert "schedule AuditFunctionReleaseHeldCalls" in triggers  # written after the window
    assert runtime.audit_verify()


def test_read_only_calls_are_not_recorded(runtime: LocalRuntime) -> None:
    published = len(runtime.published)
    share = f"{runtime.job_queue}/quota-share/medium"
    runtime.admin_batch(GRACE, "DescribeQuotaShare", {"quotaShareArn": share})
    assert len(runtime.published) == published


def test_functions_call_batch_as_their_own_role() -> None:
    assert function_principal("EscalationsApiFunction") == (
        "arn:aws:sts::111122223333:assumed-role/"
        "quotagov-local-EscalationsApiFunctionRole/EscalationsApiFunction"
    )
