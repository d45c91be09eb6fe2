"""Fault injection into every outside dependency of the local runtime, reproducible from a seed.

``quotagov demo --faults SEED`` and ``quotagov serve --faults SEED`` build a
:class:`FaultPlan` and give it to the :class:`~quotagov_tools.local.runtime.LocalRuntime`,
which injects at the dependency's edge so that the production code runs unchanged:

========================  ======================================================================
kind                      where and how
========================  ======================================================================
``dynamodb_throttling``   botocore ``before-send`` hook: ``ProvisionedThroughputExceededException``
                          (HTTP 400) instead of sending; botocore's standard mode retries it
``transaction_conflict``  botocore ``before-send`` on ``TransactWriteItems``:
                          ``TransactionCanceledException`` with ``TransactionConflict`` reasons
``condition_race``        botocore ``before-send`` on a conditional ``PutItem``/``UpdateItem``/
                          ``DeleteItem``: the same write is applied once first (a concurrent
                          twin invocation won the race), then ours meets its condition
``lost_response``         botocore ``before-send``, after moto answered: the call took effect but
                          the caller sees ``ReadTimeoutError``; botocore re-sends it
``sqs_redelivery``        a handled SQS message is not deleted; it comes back after the queue's
                          visibility timeout (at-least-once delivery)
``event_duplicate``       an EventBridge event is delivered twice
``event_reorder``         two events delivered in one round swap places (within that window)
``batch_throttling``      the simulated Batch answers ``TooManyRequestsException`` (HTTP 429)
``batch_server_error``    the simulated Batch answers ``ServerException`` (HTTP 500)
``slack_429``             the fake Slack answers HTTP 429 with ``Retry-After: 1``
``slack_no_answer``       the fake Slack closes the connection without answering (what a timeout
                          leaves the client with)
``slack_ratelimited``     ``{"ok": false, "error": "ratelimited"}``
``slack_msg_too_long``    ``{"ok": false, "error": "msg_too_long"}``
========================  ======================================================================

Faults are injected only while a function's handler runs (never into the runtime's own
plumbing). Each kind fires once at a seed-chosen early opportunity (so every kind is
seen in every run) and then at ``rate`` per opportunity. botocore's backoff between
retries is not slept in wall time while a plan is active (the runtime's time is virtual);
the waits are added up in :attr:`FaultPlan.backoff_seconds`.

Sources: DynamoDB error handling,
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html;
EventBridge delivery (at least once, unordered),
https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-service-event.html; SQS
at-least-once delivery,
https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/standard-queues.html;
Slack rate limits, https://docs.slack.dev/apis/web-api/rate-limits.
"""

from __future__ import annotations

import enum
import json
import random
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class FaultKind(enum.Enum):
    """One kind of injected fault (see the module table)."""

    DYNAMODB_THROTTLING = "dynamodb_throttling"
    TRANSACTION_CONFLICT = "transaction_conflict"
    CONDITION_RACE = "condition_race"
    LOST_RESPONSE = "lost_response"
    SQS_REDELIVERY = "sqs_redelivery"
    EVENT_DUPLICATE = "event_duplicate"
    EVENT_REORDER = "event_reorder"
    BATCH_THROTTLING = "batch_throttling"
    BATCH_SERVER_ERROR = "batch_server_error"
    SLACK_429 = "slack_429"
    SLACK_NO_ANSWER = "slack_no_answer"
    SLACK_RATELIMITED = "slack_ratelimited"
    SLACK_MSG_TOO_LONG = "slack_msg_too_long"


#: Default share of opportunities at which a kind fires (after its first, forced one).
DEFAULT_RATE = 0.03

#: The forced first fault of a kind comes at one of its first this many opportunities.
FIRST_WITHIN = 4

#: The Slack methods whose calls may be faulted, and the faults each may get.
_SLACK_FAULTS = (
    FaultKind.SLACK_429,
    FaultKind.SLACK_NO_ANSWER,
    FaultKind.SLACK_RATELIMITED,
    FaultKind.SLACK_MSG_TOO_LONG,
)

#: DynamoDB writes that carry a ``ConditionExpression`` a twin write can make fail.
_CONDITIONAL_WRITES = ("PutItem", "UpdateItem", "DeleteItem")


@dataclass
class FaultPlan:
    """Which faults to inject, decided by a seeded random generator.

    Args:
        seed: the seed; the same seed and the same calls give the same faults.
        rate: share (0-1) of opportunities at which a kind fires after its first.

    Raises:
        ValueError: ``rate`` outside 0-1.
    """

    seed: int
    rate: float = DEFAULT_RATE
    counts: Counter[FaultKind] = field(default_factory=Counter)
    #: botocore backoff seconds skipped (the runtime's time is virtual).
    backoff_seconds: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"rate: must be between 0 and 1, got {self.rate}")
        self._random = random.Random(self.seed)
        self._lock = threading.Lock()
        self._seen: Counter[FaultKind] = Counter()
        self._first = {kind: self._random.randint(1, FIRST_WITHIN) for kind in FaultKind}

    def roll(self, kind: FaultKind) -> bool:
        """One opportunity for ``kind``: True (and counted) when it fires now."""
        with self._lock:
            self._seen[kind] += 1
            if self._seen[kind] == self._first[kind]:
                fire = True
            else:
                fire = self._random.random() < self.rate
            if fire:
                self.counts[kind] += 1
            return fire

    def choose(self, kinds: tuple[FaultKind, ...]) -> FaultKind | None:
        """One opportunity for each of ``kinds`` in turn; the first that fires, or None."""
        for kind in kinds:
            if self.roll(kind):
                return kind
        return None

    def pick(self, count: int) -> int:
        """A seeded index below ``count`` (which of several events to reorder)."""
        with self._lock:
            return self._random.randrange(count)

    def summary(self) -> str:
        """``kind=N`` for every kind, in table order."""
        return ", ".join(f"{kind.value}={self.counts[kind]}" for kind in FaultKind)

    def missing(self) -> list[FaultKind]:
        """The kinds that never fired."""
        return [kind for kind in FaultKind if self.counts[kind] == 0]


#: Where a refused request is pointed, so that no backend behind botocore carries it out.
NOWHERE = "http://127.0.0.1:9/quotagov-injected-fault"


def refusal(request: Any, status: int, body: dict[str, Any]) -> Any:
    """A botocore ``AWSResponse`` carrying a DynamoDB JSON error ``body``, for a
    ``before-send`` handler to answer ``request`` with.

    botocore calls every ``before-send`` handler and takes the first answer, so moto's
    handler would still carry the request out: the request of this attempt (botocore
    builds a new one for each retry) is pointed at :data:`NOWHERE`, which moto does not
    serve and which is never sent, since an answer is given.
    """
    from botocore.awsrequest import AWSResponse, HTTPHeaders

    class _Raw:
        def __init__(self, data: bytes) -> None:
            self._data = data

        def stream(self, **_: Any) -> Any:
            yield self._data

    data = json.dumps(body).encode()
    headers = HTTPHeaders()
    headers["Content-Type"] = "application/x-amz-json-1.0"
    headers["x-amzn-RequestId"] = "injected"
    answer = AWSResponse(request.url, status, headers, _Raw(data))
    request.url = NOWHERE
    return answer


class BotocoreFaults:
    """The botocore hooks of a :class:`FaultPlan` on a boto3 session's event system.

    Args:
        plan: the plan.
        current_function: the function running now (None between invocations: nothing
            is injected into the runtime's own calls).
    """

    def __init__(self, plan: FaultPlan, current_function: Callable[[], str | None]) -> None:
        self.plan = plan
        self.current_function = current_function

    def install(self, events: Any) -> None:
        """Register on ``events`` (a session's ``HierarchicalEmitter``): the refusals
        before moto answers, the lost responses after."""
        events.register_first("before-send", self.before_moto)
        events.register_last("before-send", self.after_moto)

    @staticmethod
    def _operation(event_name: str) -> tuple[str, str]:
        parts = event_name.split(".")
        return (parts[1], parts[2]) if len(parts) >= 3 else ("", "")

    def before_moto(self, request: Any, event_name: str, **_: Any) -> Any:
        """Answer a refusal instead of sending, or apply a twin write first."""
        if self.current_function() is None:
            return None
        service, operation = self._operation(event_name)
        if service != "dynamodb":
            return None
        if self.plan.roll(FaultKind.DYNAMODB_THROTTLING):
            return refusal(
                request,
                400,
                {
                    "__type": "com.amazonaws.dynamodb.v20120810#"
                    "ProvisionedThroughputExceededException",
                    "message": "The level of configured provisioned throughput for the table "
                    "was exceeded (injected)",
                },
            )
        if operation == "TransactWriteItems" and self.plan.roll(FaultKind.TRANSACTION_CONFLICT):
            items = json.loads(request.body or b"{}").get("TransactItems") or []
            reasons = [{"Code": "TransactionConflict"} for _ in items] or [
                {"Code": "TransactionConflict"}
            ]
            return refusal(
                request,
                400,
                {
                    "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
                    "message": "Transaction cancelled, please refer cancellation reasons for "
                    "specific reasons [TransactionConflict] (injected)",
                    "CancellationReasons": reasons,
                },
            )
        conditional = b"ConditionExpression" in (request.body or b"")
        if (
            operation in _CONDITIONAL_WRITES
            and conditional
            and self.plan.roll(FaultKind.CONDITION_RACE)
        ):
            from moto.core.models import botocore_stubber

            botocore_stubber(request=request, event_name=event_name)  # the twin's write
        return None

    def after_moto(self, request: Any, event_name: str, **_: Any) -> Any:
        """Lose the answer of a call moto has carried out: ``ReadTimeoutError``."""
        if self.current_function() is None:
            return None
        service, _operation = self._operation(event_name)
        if service in ("dynamodb", "sqs") and self.plan.roll(FaultKind.LOST_RESPONSE):
            from botocore.exceptions import ReadTimeoutError

            raise ReadTimeoutError(endpoint_url=request.url)
        return None


class SkippedBackoff:
    """Stands in for the ``time`` module inside ``botocore.endpoint`` while a plan is
    active: a retry's backoff is added to :attr:`FaultPlan.backoff_seconds`, not slept."""

    def __init__(self, plan: FaultPlan) -> None:
        self.plan = plan

    def sleep(self, seconds: float) -> None:
        """Count ``seconds`` of backoff."""
        self.plan.backoff_seconds += float(seconds)

    def __getattr__(self, name: str) -> Any:
        import time

        return getattr(time, name)


#: Tries of one Batch call: the boto3 Batch client's first try and its retries
#: (``quotagov.adapters.batch_boto3.DEFAULT_MAX_ATTEMPTS``, adaptive mode).
BATCH_SDK_TRIES = 8


class FaultyBatch:
    """The simulated Batch with the plan's throttling and server faults, and the retries
    the boto3 Batch client would make.

    The simulated Batch stands for Batch's servers; in a deployment the boto3 client's
    adaptive retry mode (:mod:`quotagov.adapters.batch_boto3`) retries a 429 or a 5xx
    before the adapter sees it. So a faulted call is tried again here, up to
    :data:`BATCH_SDK_TRIES` tries, each try another opportunity for a fault; the error
    reaches the caller only when every try failed. Each refused try is a call Batch
    answered with an error (CloudTrail records it with its ``errorCode``).

    Args:
        inner: the Batch port the functions use (recorded).
        simulated: the :class:`~quotagov_tools.batch_simulated.SimulatedBatch`
            (whose ``fail_next`` maps the failure as boto3 would).
        plan: the plan.
        current_function: as in :class:`BotocoreFaults`.
    """

    def __init__(
        self,
        inner: Any,
        simulated: Any,
        plan: FaultPlan,
        current_function: Callable[[], str | None],
    ) -> None:
        self._inner = inner
        self._simulated = simulated
        self._plan = plan
        self._current_function = current_function

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._inner, name)
        if name.startswith("_") or not callable(target):
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            if self._current_function() is None:
                return target(*args, **kwargs)
            from quotagov.governance.ports import BatchServerError, BatchThrottledError

            operation = "".join(part.capitalize() for part in name.split("_"))
            for attempt in range(1, BATCH_SDK_TRIES + 1):
                kind = self._plan.choose((FaultKind.BATCH_THROTTLING, FaultKind.BATCH_SERVER_ERROR))
                if kind is FaultKind.BATCH_THROTTLING:
                    self._simulated.fail_next(
                        operation, code="TooManyRequestsException", message="Too Many Requests"
                    )
                elif kind is FaultKind.BATCH_SERVER_ERROR:
                    self._simulated.fail_next(operation, code="ServerException")
                try:
                    return target(*args, **kwargs)
                except (BatchThrottledError, BatchServerError):
                    if kind is None or attempt == BATCH_SDK_TRIES:
                        raise
            raise AssertionError("unreachable")  # the last try returned or raised

        return call


def slack_fault(plan: FaultPlan, method: str) -> FaultKind | None:
    """The fault (if any) the fake Slack gives one Web API call of ``method``."""
    if method not in ("chat.postMessage", "chat.update"):
        return None
    return plan.choose(_SLACK_FAULTS)


def shuffle_window(plan: FaultPlan, delivered: list[Any]) -> list[Any]:
    """``delivered`` with the plan's duplicates and one reordering within the window."""
    out: list[Any] = []
    for item in delivered:
        out.append(item)
        if plan.roll(FaultKind.EVENT_DUPLICATE):
            out.append(item)
    if len(out) >= 2 and plan.roll(FaultKind.EVENT_REORDER):
        i = plan.pick(len(out) - 1)
        out[i], out[i + 1] = out[i + 1], out[i]
    return out
