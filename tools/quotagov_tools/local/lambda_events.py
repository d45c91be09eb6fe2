"""Events and context objects shaped exactly as AWS delivers them to a Lambda handler.

- :class:`LambdaContext`: the attributes of the Python runtime's context object
  (function name = the template's logical id, ARN, request id, remaining time).
- :func:`rest_api_event`: an API Gateway REST (v1) Lambda proxy event, following the
  API Gateway developer guide ("Input format of a Lambda function for proxy
  integration"): ``resource`` is the route template, ``path`` the concrete path,
  ``pathParameters``/``queryStringParameters`` ``None`` when empty, IAM callers in
  ``requestContext.identity`` (``userArn``, ``caller``, ``accountId``...), and the body
  base64-encoded with ``isBase64Encoded`` when the request's ``Content-Type`` matches
  one of the API's ``BinaryMediaTypes``.
- :func:`sqs_event`: the SQS event source mapping's ``Records`` batch.
- :func:`scheduled_event`: the EventBridge ``Scheduled Event`` envelope.

See API Gateway Developer Guide, "Lambda proxy integrations in API Gateway"
(https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html),
for the fields that matter.
"""

from __future__ import annotations

import base64
import hashlib
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from fnmatch import fnmatch
from typing import Any

from quotagov_tools.local.stack import ACCOUNT_ID, REGION


class LambdaContext:
    """The Lambda context object for one invocation.

    Args:
        function_name: the physical function name (the local runtime uses the logical id).
        timeout_seconds: the function's ``Timeout``; drives :meth:`get_remaining_time_in_millis`.
        memory_limit_in_mb: the function's memory size.
    """

    def __init__(
        self, function_name: str, timeout_seconds: int = 30, memory_limit_in_mb: int = 256
    ) -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.invoked_function_arn = f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:function:{function_name}"
        self.memory_limit_in_mb = memory_limit_in_mb
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = f"{datetime.now(UTC):%Y/%m/%d}/[$LATEST]{uuid.uuid4().hex}"
        self._deadline = time.monotonic() + timeout_seconds

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds left before the function's timeout (never negative)."""
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def iso_time(epoch_seconds: float) -> str:
    """Render epoch seconds as EventBridge and CloudTrail do: ``2026-05-04T09:15:27Z``."""
    return datetime.fromtimestamp(epoch_seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _short_id(text: str, length: int = 16) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length].upper()


def iam_identity(principal_arn: str | None, source_ip: str = "127.0.0.1") -> dict[str, Any]:
    """``requestContext.identity`` of a REST API call, signed by ``principal_arn`` (or anonymous).

    For an assumed role ``arn:aws:sts::<acct>:assumed-role/<role>/<session>`` the
    ``caller``/``user`` is ``<role id>:<session>`` as API Gateway reports it.
    """
    identity: dict[str, Any] = {
        "cognitoIdentityPoolId": None,
        "accountId": None,
        "cognitoIdentityId": None,
        "caller": None,
        "sourceIp": source_ip,
        "principalOrgId": None,
        "accessKey": None,
        "cognitoAuthenticationType": None,
        "cognitoAuthenticationProvider": None,
        "userArn": None,
        "userAgent": "quotagov-local",
        "user": None,
    }
    if principal_arn:
        parts = principal_arn.split(":", 5)
        account = parts[4] if len(parts) > 4 else ACCOUNT_ID
        resource = parts[5] if len(parts) > 5 else principal_arn
        session = resource.rsplit("/", 1)[-1]
        caller = (
            f"AROA{_short_id(resource)}:{session}"
            if resource.startswith("assumed-role/")
            else f"AIDA{_short_id(resource)}"
        )
        identity.update(
            accountId=account,
            caller=caller,
            user=caller,
            userArn=principal_arn,
            accessKey=f"ASIA{_short_id(principal_arn)}",
        )
    return identity


def is_binary(content_type: str | None, binary_media_types: Sequence[str]) -> bool:
    """Whether API Gateway would base64-encode a body of ``content_type`` for this API."""
    if not content_type:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return any(fnmatch(media, pattern.lower()) for pattern in binary_media_types)


def _proxy_body(
    body: bytes | None, headers: Mapping[str, str], binary_media_types: Sequence[str]
) -> tuple[str | None, bool]:
    """``body`` and ``isBase64Encoded`` of the event: base64 only for a binary media type.

    A text body that is not valid UTF-8 is passed with each bad byte replaced by U+FFFD,
    as API Gateway does for a media type that is not binary (so a Slack signature over
    such a body no longer matches, and a JSON body is read with the replacements).
    """
    content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), None)
    if body is None:
        return None, False
    if is_binary(content_type, binary_media_types):
        return base64.b64encode(body).decode("ascii"), True
    return body.decode("utf-8", "replace"), False


def _request_context(
    *,
    method: str,
    resource: str,
    path: str,
    principal_arn: str | None,
    stage: str,
    api_id: str,
    epoch_ms: int,
) -> dict[str, Any]:
    """``requestContext`` of a REST proxy event (request id, time, stage, identity)."""
    request_time = datetime.fromtimestamp(epoch_ms / 1000, UTC).strftime("%d/%b/%Y:%H:%M:%S +0000")
    request_id = str(uuid.uuid4())
    return {
        "resourceId": _short_id(resource, 6).lower(),
        "resourcePath": resource,
        "httpMethod": method.upper(),
        "extendedRequestId": _short_id(request_id, 16),
        "requestTime": request_time,
        "path": f"/{stage}{path}",
        "accountId": ACCOUNT_ID,
        "protocol": "HTTP/1.1",
        "stage": stage,
        "domainPrefix": api_id,
        "requestTimeEpoch": epoch_ms,
        "requestId": request_id,
        "identity": iam_identity(principal_arn),
        "domainName": f"{api_id}.execute-api.{REGION}.amazonaws.com",
        "apiId": api_id,
    }


def rest_api_event(
    *,
    method: str,
    resource: str,
    path: str,
    path_parameters: Mapping[str, str] | None,
    headers: Mapping[str, str] | None,
    query: Mapping[str, list[str]] | None,
    body: bytes | None,
    principal_arn: str | None,
    binary_media_types: Sequence[str],
    stage: str = "Prod",
    api_id: str = "local",
    now: Callable[[], float] = time.time,
) -> dict[str, Any]:
    """Build the REST API (v1) proxy event API Gateway sends for one request.

    Args:
        method: HTTP method; resource: the route template (``/jobs/{jobId}``); path: the
            request path without the stage; path_parameters: values of the template's
            ``{name}`` parts; headers: as sent (names keep their case); query: each name
            with all its values; body: raw bytes or ``None``; principal_arn: the SigV4
            caller for IAM-authorised routes (``None`` otherwise).
        binary_media_types: the API's ``BinaryMediaTypes`` (``*/*`` matches everything).
        stage, api_id: the API's stage name and id; now: epoch seconds of the request.
    """
    header_map = dict(headers or {})
    text_body, encoded = _proxy_body(body, header_map, binary_media_types)
    context = _request_context(
        method=method,
        resource=resource,
        path=path,
        principal_arn=principal_arn,
        stage=stage,
        api_id=api_id,
        epoch_ms=int(now() * 1000),
    )
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method.upper(),
        "headers": header_map or None,
        "multiValueHeaders": {k: [v] for k, v in header_map.items()} or None,
        "queryStringParameters": {k: v[-1] for k, v in query.items()} if query else None,
        "multiValueQueryStringParameters": dict(query) if query else None,
        "pathParameters": dict(path_parameters) if path_parameters else None,
        "stageVariables": None,
        "requestContext": context,
        "body": text_body,
        "isBase64Encoded": encoded,
    }


def sqs_record(
    message: Mapping[str, Any], queue_arn: str, *, sent_at_ms: int | None = None
) -> dict[str, Any]:
    """One ``Records[]`` entry of an SQS event from a ``ReceiveMessage`` result message."""
    attributes = dict(message.get("Attributes") or {})
    attributes.setdefault("ApproximateReceiveCount", "1")
    if sent_at_ms is not None:
        attributes.setdefault("SentTimestamp", str(sent_at_ms))
        attributes.setdefault("ApproximateFirstReceiveTimestamp", str(sent_at_ms))
    message_attributes = {
        name: {
            "stringValue": value.get("StringValue"),
            "binaryValue": value.get("BinaryValue"),
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": value.get("DataType", "String"),
        }
        for name, value in (message.get("MessageAttributes") or {}).items()
    }
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": attributes,
        "messageAttributes": message_attributes,
        "md5OfBody": message.get("MD5OfBody", hashlib.md5(message["Body"].encode()).hexdigest()),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": REGION,
    }


def scheduled_event(rule_arn: str, at: float) -> dict[str, Any]:
    """The ``Scheduled Event`` envelope EventBridge sends when a ``rate(...)`` rule fires."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": ACCOUNT_ID,
        "time": iso_time(at),
        "region": REGION,
        "resources": [rule_arn],
        "detail": {},
    }
