"""Routing events between functions: the triggers the local runtime plays the part of.

:class:`Deliveries` does, in virtual time, what AWS does between an invocation and the
next ones:

- EventBridge: envelopes :meth:`~Deliveries.emit`-ted (simulated Batch state changes,
  synthesized CloudTrail calls) are put on moto's bus, matched by the template's rule
  patterns (:class:`~quotagov_tools.local.eventbus.LocalEventBus`) and given to the target
  function as an asynchronous invocation (:meth:`~Deliveries.invoke_async`: the
  template's ``EventInvokeConfig`` retries, then its ``OnFailure`` SQS destination).
- SQS event source mappings: messages go to the function in batches of the template's
  ``BatchSize``; messages reported in ``batchItemFailures`` (or the whole batch when the
  handler raises) stay invisible for the queue's ``VisibilityTimeout`` of *virtual*
  time, then come back; after ``maxReceiveCount`` receives SQS moves them to the DLQ.
- Schedules: ``rate(...)`` rules fire when virtual time passes their next tick.

Nothing here moves the clock; the runtime does (``LocalRuntime.advance_to``) and asks
:meth:`~Deliveries.due_times` where to stop.
"""

from __future__ import annotations

import functools
import json
import threading
import uuid
from dataclasses import dataclass
from typing import Any

from quotagov.clock import ManualClock
from quotagov_tools.local.eventbus import LocalEventBus
from quotagov_tools.local.faults import FaultKind, FaultPlan, shuffle_window
from quotagov_tools.local.invoker import Invocation, Invoker
from quotagov_tools.local.lambda_events import iso_time, scheduled_event, sqs_record
from quotagov_tools.local.stack import ACCOUNT_ID, REGION, FunctionSpec, SqsTrigger, Stack

#: How long SQS keeps a received message invisible in real time; virtual time decides.
_REAL_VISIBILITY_SECONDS = 43200
#: Rounds of deliveries after which :meth:`Deliveries.pump` gives up (a loop of triggers).
_MAX_ROUNDS = 1000


@dataclass
class _Parked:
    """A received SQS message that failed and reappears at virtual time ``due``."""

    queue_url: str
    receipt_handle: str
    due: float


def _destination_record(
    stack: Stack, spec: FunctionSpec, event: dict[str, Any], record: Invocation, now: float
) -> dict[str, Any]:
    """The record Lambda sends to an ``OnFailure`` destination after the last retry."""
    return {
        "version": "1.0",
        "timestamp": iso_time(now),
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "functionArn": stack.get_att(spec.logical_id, "Arn") + ":$LATEST",
            "condition": "RetriesExhausted",
            "approximateInvokeCount": 1 + spec.async_retries,
        },
        "requestPayload": event,
        "responseContext": {"statusCode": 200, "functionError": "Unhandled"},
        "responsePayload": {"errorMessage": record.error},
    }


def _failed_message_ids(
    trigger: SqsTrigger, messages: list[dict[str, Any]], record: Invocation
) -> set[str]:
    """The messages of a batch that go back to the queue: all when the handler raised,
    else those in ``batchItemFailures`` when the mapping reports partial failures."""
    if not record.ok:
        return {m["MessageId"] for m in messages}
    if trigger.partial_failures and isinstance(record.result, dict):
        return {
            str(item.get("itemIdentifier")) for item in record.result.get("batchItemFailures") or []
        }
    return set()


class Deliveries:
    """The event bus, the SQS event source mappings, async invocations and schedules.

    Args:
        invoker: runs the target functions.
        clock: the virtual clock (visibility timeouts and schedule ticks).
        lock: the runtime's lock, held while delivering.
        faults: the plan whose SQS redeliveries and EventBridge duplicates and
            reorderings to inject (:mod:`quotagov_tools.local.faults`); None: none.

    :meth:`connect` gives it the provisioned stack and bus; until then nothing is due.
    """

    def __init__(
        self,
        invoker: Invoker,
        clock: ManualClock,
        lock: threading.RLock,
        faults: FaultPlan | None = None,
    ) -> None:
        self.invoker = invoker
        self.faults = faults
        self.clock = clock
        self.lock = lock
        #: Every event put on the bus (Batch state changes, CloudTrail calls), in order.
        self.published: list[dict[str, Any]] = []
        self._pending: list[dict[str, Any]] = []
        self._parked: list[_Parked] = []
        self._next_tick: dict[str, float] = {}
        self.stack: Stack
        self.bus: LocalEventBus

    def connect(self, stack: Stack, bus: LocalEventBus) -> None:
        """Deliver for ``stack``'s triggers; schedules first fire one period from now."""
        self.stack = stack
        self.bus = bus
        for trigger in stack.schedule_triggers():
            self._next_tick[trigger.name] = self.clock.now() + trigger.every_seconds

    @functools.cached_property
    def sqs(self) -> Any:
        """The SQS client the event source mappings poll with (moto)."""
        import boto3

        return boto3.client("sqs", region_name=REGION)

    def emit(self, envelope: dict[str, Any]) -> None:
        """Queue an event envelope for the bus (delivered by the next :meth:`pump`)."""
        with self.lock:
            self._pending.append(envelope)

    def pump(self) -> None:
        """Deliver everything due now: events on the bus and SQS messages, until quiet.

        Raises:
            RuntimeError: when deliveries keep causing deliveries for 1000 rounds.
        """
        with self.lock:
            for _ in range(_MAX_ROUNDS):
                # SQS first: a queue hands a message over in milliseconds, CloudTrail
                # takes seconds to minutes to put a call on the bus.
                moved = self._deliver_sqs() + self._deliver_events()
                if not moved:
                    return
            raise RuntimeError("local runtime: deliveries did not settle after 1000 rounds")

    def invoke_async(self, function: str, event: dict[str, Any], trigger: str) -> Invocation:
        """Invoke as Lambda does for asynchronous sources (EventBridge, schedules).

        A failed invocation is retried ``EventInvokeConfig.MaximumRetryAttempts`` times
        (default 2); after the last failure the event goes to the ``OnFailure`` SQS
        destination when the template gives one, wrapped like Lambda's destination
        record (``requestContext``, ``requestPayload``, ``responsePayload``).
        """
        spec = self.invoker.functions[function]
        record = self.invoker.invoke(function, event, trigger=trigger)
        for _retry in range(spec.async_retries):
            if record.ok:
                break
            record = self.invoker.invoke(function, event, trigger=f"{trigger} (retry)")
        if not record.ok and spec.on_failure_queue:
            failure = _destination_record(self.stack, spec, event, record, self.clock.now())
            self.sqs.send_message(
                QueueUrl=str(self.stack.ref(spec.on_failure_queue)),
                MessageBody=json.dumps(failure, default=str),
            )
        return record

    # -- EventBridge -------------------------------------------------------------------

    def _deliver_events(self) -> int:
        """Put the pending envelopes on the bus and invoke the rules' targets."""
        pending, self._pending[:] = list(self._pending), []
        for envelope in pending:
            self.bus.put(envelope)
            self.published.append(envelope)
        delivered = self.bus.take()
        if self.faults is not None:
            delivered = shuffle_window(self.faults, delivered)
        for function, envelope in delivered:
            self.invoke_async(function, envelope, f"eventbridge {envelope.get('detail-type')}")
        return len(delivered) + len(pending)

    # -- SQS event source mappings -------------------------------------------------------

    def _deliver_sqs(self) -> int:
        """Give every visible message of every mapped queue to its function."""
        return sum(self._deliver_queue(trigger) for trigger in self.stack.sqs_triggers())

    def _deliver_queue(self, trigger: SqsTrigger) -> int:
        """Receive batches of ``trigger``'s queue until it is empty; the messages handled."""
        sqs = self.sqs
        url = str(self.stack.ref(trigger.queue))
        arn = self.stack.get_att(trigger.queue, "Arn")
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])
        visibility = int(attributes["Attributes"]["VisibilityTimeout"])
        handled = 0
        while True:
            messages = sqs.receive_message(
                QueueUrl=url,
                MaxNumberOfMessages=min(trigger.batch_size, 10),
                VisibilityTimeout=_REAL_VISIBILITY_SECONDS,
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
            ).get("Messages", [])
            if not messages:
                return handled
            handled += len(messages)
            event = {"Records": [sqs_record(m, arn) for m in messages]}
            record = self.invoker.invoke(trigger.function, event, trigger=f"sqs {trigger.queue}")
            self._settle(url, messages, _failed_message_ids(trigger, messages, record), visibility)

    def _settle(
        self, url: str, messages: list[dict[str, Any]], failed: set[str], visibility: int
    ) -> None:
        """Delete the handled messages; park the failed ones for ``visibility`` seconds."""
        for message in messages:
            redelivered = self.faults is not None and self.faults.roll(FaultKind.SQS_REDELIVERY)
            if message["MessageId"] in failed or redelivered:
                due = self.clock.now() + visibility
                self._parked.append(_Parked(url, message["ReceiptHandle"], due))
            else:
                self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])

    def release_parked(self) -> None:
        """Make the parked messages whose virtual visibility timeout ran out visible again."""
        now = self.clock.now()
        due = [p for p in self._parked if p.due <= now]
        self._parked = [p for p in self._parked if p.due > now]
        for parked in due:
            self.sqs.change_message_visibility(
                QueueUrl=parked.queue_url, ReceiptHandle=parked.receipt_handle, VisibilityTimeout=0
            )

    # -- schedules and time --------------------------------------------------------------

    def fire_schedules(self) -> None:
        """Fire every schedule tick at or before now, each as an asynchronous invocation."""
        now = self.clock.now()
        for trigger in self.stack.schedule_triggers():
            while self._next_tick[trigger.name] <= now:
                rule_arn = f"arn:aws:events:{REGION}:{ACCOUNT_ID}:rule/{trigger.name}"
                event = scheduled_event(rule_arn, self._next_tick[trigger.name])
                self.invoke_async(trigger.function, event, f"schedule {trigger.name}")
                self._next_tick[trigger.name] += trigger.every_seconds

    def due_times(self) -> list[float]:
        """Virtual times at which something is due: schedule ticks, parked messages."""
        return [*self._next_tick.values(), *(p.due for p in self._parked)]
