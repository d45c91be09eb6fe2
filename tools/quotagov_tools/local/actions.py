"""Which AWS actions each function's code called in the local runtime, by IAM action name.

The runtime runs every function as its execution role (:mod:`.invoker`), so it can say
what a role must be allowed to do: :class:`ActionLog` keeps one :class:`ActionCall` per
AWS call a handler made while it ran, named as IAM names the action
(``batch:GetJobQueueSnapshot``, ``kms:VerifyMac``, ``dynamodb:PutItem``):

- Batch calls go through the Batch port, which the runtime wraps in
  :class:`ActionRecordingBatch` (the port's methods are the API's operations in snake
  case, :data:`BATCH_ACTIONS`);
- every other AWS call is a boto3 call to moto, seen through botocore's
  ``before-parameter-build`` event (:meth:`ActionLog.on_botocore_call`, registered on
  the session the functions' clients come from).

Calls made outside an invocation (provisioning, an administrator's ``/_local/batch``,
the runtime polling its queues, ``audit verify``) belong to no function and are not
kept. ``tests/deploy/test_actions_granted.py`` compares the log of a run with the
grants of the built template.

The action is the API operation's name with the service's IAM prefix; for the few
operations whose IAM action has another name (S3 ``ListObjectsV2`` is ``s3:ListBucket``)
the log keeps the operation's name, and a DynamoDB ``TransactWriteItems`` is authorised
per contained write, so read the log with that in mind outside Batch and KMS.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from quotagov.governance.ports.batch import BatchPort


def _camel(method: str) -> str:
    """``get_job_queue_snapshot`` -> ``GetJobQueueSnapshot``."""
    return "".join(part.capitalize() for part in method.split("_"))


#: Batch port method -> IAM action (every method of :class:`BatchPort` is one API call).
BATCH_ACTIONS: Mapping[str, str] = {
    name: f"batch:{_camel(name)}"
    for name, value in vars(BatchPort).items()
    if callable(value) and not name.startswith("_")
}

#: Request members naming the resource a call acts on, first found wins.
_RESOURCE_MEMBERS = (
    "KeyId",
    "TableName",
    "QueueUrl",
    "Bucket",
    "Name",
    "SecretId",
    "jobQueue",
    "quotaShareArn",
    "jobId",
)


@dataclass(frozen=True)
class ActionCall:
    """One AWS call made by a function's code.

    Attributes:
        function: the function's logical id (whose role made the call).
        action: the IAM action, ``<service prefix>:<Operation>``.
        resource: what the request named (key id, table, queue URL, job queue, job
            id, ...), ``""`` when it names none of :data:`_RESOURCE_MEMBERS`.
    """

    function: str
    action: str
    resource: str = ""


def resource_of(request: Mapping[str, Any]) -> str:
    """The resource a request names (the first of :data:`_RESOURCE_MEMBERS` it has)."""
    for member in _RESOURCE_MEMBERS:
        value = request.get(member)
        if isinstance(value, str) and value:
            return value
    return ""


class ActionLog:
    """The AWS calls of the functions, in order.

    Args:
        current_function: the logical id of the function whose invocation is running,
            None outside any invocation.
    """

    def __init__(self, current_function: Callable[[], str | None]) -> None:
        self._current = current_function
        self.calls: list[ActionCall] = []

    def record(self, action: str, request: Mapping[str, Any]) -> None:
        """Keep ``action`` (with the resource ``request`` names) for the running function."""
        function = self._current()
        if function is not None:
            self.calls.append(ActionCall(function, action, resource_of(request)))

    def on_botocore_call(self, model: Any, params: Mapping[str, Any], **_: Any) -> None:
        """botocore ``before-parameter-build`` handler: record the operation about to be
        sent, with its API parameters (``params``)."""
        service = model.service_model
        prefix = service.signing_name or service.endpoint_prefix
        self.record(f"{prefix}:{model.name}", params)

    def actions(self) -> dict[str, set[str]]:
        """Function logical id -> every action it called."""
        used: dict[str, set[str]] = {}
        for call in self.calls:
            used.setdefault(call.function, set()).add(call.action)
        return used


class ActionRecordingBatch:
    """A Batch port that records each API call in an :class:`ActionLog`, then makes it.

    Args:
        inner: the port doing the work (the CloudTrail-recording simulated Batch).
        log: where the calls are recorded.
    """

    def __init__(self, inner: Any, log: ActionLog) -> None:
        self._inner = inner
        self._log = log

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._inner, name)
        action = BATCH_ACTIONS.get(name)
        if action is None or not callable(attribute):
            return attribute

        def recorded(**request: Any) -> Any:
            self._log.record(action, request)
            return attribute(**request)

        return recorded
