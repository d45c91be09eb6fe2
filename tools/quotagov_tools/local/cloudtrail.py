"""CloudTrail-shaped events for the Batch calls made through the local runtime.

The simulated Batch does not emit CloudTrail records; in AWS, every mutating Batch
call (``UpdateQuotaShare``, ``UpdateServiceJob``...) is a management event that
CloudTrail delivers to EventBridge as ``AWS API Call via CloudTrail`` with the
caller's ``userIdentity`` (Amazon EventBridge User Guide, "AWS service events delivered
via AWS CloudTrail",
https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-service-event-cloudtrail.html).
The local runtime wraps the Batch port in :class:`CloudTrailRecordingBatch`, which
synthesizes exactly that envelope after each mutating call, successful or not (failed calls carry
``errorCode``/``errorMessage`` and a null ``responseElements``), and hands it to the
event bus, where the template's rules route it.

Read-only calls (``Describe*``, ``List*``, ``Get*``) are not emitted: a rule with
``State: ENABLED`` does not receive them either.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from quotagov.clock import Clock
from quotagov.governance.ports import BatchError
from quotagov_tools.local.lambda_events import iso_time
from quotagov_tools.local.stack import ACCOUNT_ID, REGION

#: Batch operations that are recorded (mutating management events), by port method name.
MUTATING_OPERATIONS: dict[str, str] = {
    "submit_service_job": "SubmitServiceJob",
    "update_service_job": "UpdateServiceJob",
    "terminate_service_job": "TerminateServiceJob",
    "create_quota_share": "CreateQuotaShare",
    "update_quota_share": "UpdateQuotaShare",
    "delete_quota_share": "DeleteQuotaShare",
}


def user_identity(principal_arn: str, role_arns: Mapping[str, str] | None = None) -> dict[str, Any]:
    """CloudTrail ``userIdentity`` for ``principal_arn`` (assumed role, IAM user or root).

    ``role_arns`` maps a role name to its ARN when the role has a path: a session ARN
    (``assumed-role/<name>/<session>``) never shows the path, its ``sessionIssuer.arn``
    does (AWS CloudTrail User Guide, "CloudTrail userIdentity element",
    https://docs.aws.amazon.com/awscloudtrail/latest/userguide/cloudtrail-event-reference-user-identity.html).
    """
    parts = principal_arn.split(":", 5)
    account = parts[4] if len(parts) > 4 and parts[4] else ACCOUNT_ID
    resource = parts[5] if len(parts) > 5 else principal_arn
    key_id = "ASIA" + uuid.uuid5(uuid.NAMESPACE_URL, principal_arn).hex[:16].upper()
    if resource.startswith("assumed-role/"):
        _, role, session = resource.split("/", 2)
        role_id = "AROA" + uuid.uuid5(uuid.NAMESPACE_URL, role).hex[:17].upper()
        return {
            "type": "AssumedRole",
            "principalId": f"{role_id}:{session}",
            "arn": principal_arn,
            "accountId": account,
            "accessKeyId": key_id,
            "sessionContext": {
                "sessionIssuer": {
                    "type": "Role",
                    "principalId": role_id,
                    "arn": (role_arns or {}).get(role, f"arn:aws:iam::{account}:role/{role}"),
                    "accountId": account,
                    "userName": role,
                },
                "attributes": {"creationDate": "", "mfaAuthenticated": "false"},
            },
        }
    if resource.startswith("user/"):
        name = resource.rsplit("/", 1)[-1]
        return {
            "type": "IAMUser",
            "principalId": "AIDA" + uuid.uuid5(uuid.NAMESPACE_URL, principal_arn).hex[:17].upper(),
            "arn": principal_arn,
            "accountId": account,
            "accessKeyId": key_id,
            "userName": name,
        }
    return {"type": "Root", "principalId": account, "arn": principal_arn, "accountId": account}


def cloudtrail_envelope(
    *,
    event_name: str,
    principal_arn: str,
    request: dict[str, Any],
    response: dict[str, Any] | None,
    at: float,
    error: BatchError | None = None,
    source_ip: str = "127.0.0.1",
    user_agent: str = "quotagov-local",
    role_arns: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The EventBridge ``AWS API Call via CloudTrail`` envelope for one Batch call at ``at``
    (``role_arns``: see :func:`user_identity`)."""
    identity = user_identity(principal_arn, role_arns)
    identity.get("sessionContext", {}).get("attributes", {})["creationDate"] = iso_time(at)
    detail: dict[str, Any] = {
        "eventVersion": "1.11",
        "userIdentity": identity,
        "eventTime": iso_time(at),
        "eventSource": "batch.amazonaws.com",
        "eventName": event_name,
        "awsRegion": REGION,
        "sourceIPAddress": source_ip,
        "userAgent": user_agent,
        "requestParameters": request,
        "responseElements": response,
        "requestID": str(uuid.uuid4()),
        "eventID": str(uuid.uuid4()),
        "readOnly": False,
        "eventType": "AwsApiCall",
        "managementEvent": True,
        "recipientAccountId": ACCOUNT_ID,
        "eventCategory": "Management",
    }
    if error is not None:
        detail["errorCode"] = error.code
        detail["errorMessage"] = error.message
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "AWS API Call via CloudTrail",
        "source": "aws.batch",
        "account": ACCOUNT_ID,
        "time": iso_time(at),
        "region": REGION,
        "resources": [],
        "detail": detail,
    }


def lambda_invoke_envelope(
    *,
    function_arn: str,
    principal_arn: str,
    at: float,
    role_arns: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The EventBridge envelope of the CloudTrail data event a trail logging Lambda data
    events records for one ``Invoke`` of ``function_arn`` by ``principal_arn`` at ``at``
    (AWS Lambda Developer Guide, "Logging AWS Lambda API calls using AWS CloudTrail",
    https://docs.aws.amazon.com/lambda/latest/dg/logging-using-cloudtrail.html)."""
    identity = user_identity(principal_arn, role_arns)
    identity.get("sessionContext", {}).get("attributes", {})["creationDate"] = iso_time(at)
    detail: dict[str, Any] = {
        "eventVersion": "1.09",
        "userIdentity": identity,
        "eventTime": iso_time(at),
        "eventSource": "lambda.amazonaws.com",
        "eventName": "Invoke",
        "awsRegion": REGION,
        "sourceIPAddress": "127.0.0.1",
        "userAgent": "quotagov-local",
        "requestParameters": {"functionName": function_arn},
        "responseElements": None,
        "requestID": str(uuid.uuid4()),
        "eventID": str(uuid.uuid4()),
        "readOnly": False,
        "resources": [
            {"accountId": ACCOUNT_ID, "type": "AWS::Lambda::Function", "ARN": function_arn}
        ],
        "eventType": "AwsApiCall",
        "managementEvent": False,
        "recipientAccountId": ACCOUNT_ID,
        "eventCategory": "Data",
    }
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "AWS API Call via CloudTrail",
        "source": "aws.lambda",
        "account": ACCOUNT_ID,
        "time": iso_time(at),
        "region": REGION,
        "resources": [],
        "detail": detail,
    }


class CloudTrailRecordingBatch:
    """A Batch port that records its mutating calls the way CloudTrail would.

    Every attribute of ``inner`` is passed through; the calls named in
    :data:`MUTATING_OPERATIONS` additionally produce an envelope (see
    :func:`cloudtrail_envelope`) given to ``emit``, as made by ``principal()``.

    Args:
        inner: the Batch port doing the work (the simulated Batch).
        principal: returns the caller's ARN at call time (the invoking function's role
            session, or the administrator using ``/_local/batch``).
        clock: the clock giving ``eventTime``.
        emit: receives each envelope (the local event bus).
        role_arns: role name -> role ARN (with its path), see :func:`user_identity`.
    """

    def __init__(
        self,
        inner: Any,
        *,
        principal: Callable[[], str],
        clock: Clock,
        emit: Callable[[dict[str, Any]], None],
        role_arns: Mapping[str, str] | None = None,
    ) -> None:
        self._role_arns = dict(role_arns or {})
        self._inner = inner
        self._principal = principal
        self._clock = clock
        self._emit = emit

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._inner, name)
        if name not in MUTATING_OPERATIONS or not callable(attribute):
            return attribute

        def recorded(**request: Any) -> Any:
            try:
                response = attribute(**request)
            except BatchError as exc:
                self._record(name, request, None, exc)
                raise
            self._record(name, request, response, None)
            return response

        return recorded

    def _record(
        self,
        method: str,
        request: dict[str, Any],
        response: Any,
        error: BatchError | None,
    ) -> None:
        self._emit(
            cloudtrail_envelope(
                event_name=MUTATING_OPERATIONS[method],
                principal_arn=self._principal(),
                request=dict(request),
                response=dict(response) if isinstance(response, dict) else None,
                at=self._clock.now(),
                error=error,
                role_arns=self._role_arns,
            )
        )
