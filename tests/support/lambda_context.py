"""The Lambda context object that the handlers (and Powertools) are called with."""

from __future__ import annotations

from dataclasses import dataclass

from support.aws import ACCOUNT, REGION


@dataclass(frozen=True)
class LambdaContext:
    """The attributes of the Python runtime's context object that the handlers read.

    Deterministic, unlike the local runtime's ``quotagov_tools.local.lambda_events.LambdaContext``
    (a fresh request id and a real deadline per invocation): tests pass ``LambdaContext()``
    or name the function, ``LambdaContext(function_name="JobsApiFunction")``.
    """

    function_name: str = "quotagov-tests"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 256
    aws_request_id: str = "00000000-0000-4000-8000-000000000000"
    remaining_ms: int = 60_000

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{self.function_name}"

    @property
    def log_group_name(self) -> str:
        return f"/aws/lambda/{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms
