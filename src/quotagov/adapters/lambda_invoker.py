"""Synchronous Lambda invocation for ``quotagov redrive``: implements
:class:`~quotagov.governance.ports.parked.FunctionInvoker`.

``Invoke`` with ``InvocationType=RequestResponse``: the answer says whether the
function failed again (``FunctionError``). IAM: ``lambda:InvokeFunction`` on the
stack's functions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from quotagov.governance.ports.parked import InvocationFailedError

if TYPE_CHECKING:
    from mypy_boto3_lambda import LambdaClient


class LambdaInvoker:
    """Invokes functions with a boto3 Lambda client."""

    def __init__(self, client: LambdaClient) -> None:
        self._client = client

    def invoke(self, function_arn: str, payload: Mapping[str, Any]) -> Any:
        """Run ``function_arn`` on ``payload``; returns its decoded JSON answer.

        Raises:
            InvocationFailedError: the call failed or the function raised
                (``FunctionError``; the message names its ``errorMessage``).
        """
        try:
            response = self._client.invoke(
                FunctionName=function_arn,
                InvocationType="RequestResponse",
                Payload=json.dumps(payload).encode(),
            )
        except (ClientError, BotoCoreError) as exc:
            raise InvocationFailedError(f"Invoke {function_arn}: {exc}") from exc
        raw = response["Payload"].read() if "Payload" in response else b""
        try:
            answer = json.loads(raw) if raw else None
        except ValueError:
            answer = raw.decode(errors="replace")
        if response.get("FunctionError"):
            detail = answer.get("errorMessage") if isinstance(answer, dict) else answer
            raise InvocationFailedError(f"{function_arn}: {response['FunctionError']}: {detail}")
        return answer
