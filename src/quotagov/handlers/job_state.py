"""``JobStateFunction``: ``Batch Service Job State Change`` events -> job records.

Triggers (both accepted, so the template may choose; Amazon EventBridge User Guide, "How
EventBridge retries delivering events",
https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html):

* an EventBridge rule invoking the function directly with **one event** per
  invocation (asynchronous invoke: Lambda retries, then the rule's DLQ); or
* an EventBridge rule targeting an **SQS queue** that the function polls: a batch of
  records, each body one EventBridge event, processed with Powertools
  ``BatchProcessor`` and reported as partial batch failures
  (``FunctionResponseTypes: [ReportBatchItemFailures]``).

A malformed event (not JSON, no ``detail.jobId``, unknown ``detail.status``, wrong
``detail-type``) is logged with the reason and counted (``MalformedEvents``); it never
fails the other records. Alone it is acknowledged (retrying cannot fix it); inside an
SQS batch it is reported as that record's failure so the queue's redrive policy moves
it to the dead-letter queue and nothing is lost. Transient faults (a record not visible
yet, write conflicts, Batch throttling) raise, so the event is retried.

Metrics (CloudWatch EMF, namespace ``POWERTOOLS_METRICS_NAMESPACE``): ``Preemptions``
by ``quotaShareName`` and ``kind``; ``LostInstanceSeconds`` by ``quotaShareName``;
``Dispositions`` by ``dispositionType`` and ``trigger``; ``SubmissionToFirstStart``
(seconds from the service job's ``createdAt``, i.e. ``SubmitServiceJob``, to its first
attempt's start) by ``quotaShareName``; ``PreemptionsByTeam`` by ``team``,
``quotaShareName`` and ``kind``; ``LostGpuHours`` (lost instance-seconds times the
instance type's GPUs, in hours; :mod:`quotagov.instance_types`) by ``team`` and
``quotaShareName``;
``ForeignJobEvents``; ``MalformedEvents``;
``JobStateEvents`` (events handled); ``JobStateEventsDeferred`` (retried because the
job's record is not visible yet, or another invocation is submitting its successor). Each is
emitted only for facts the event newly recorded, so duplicates add nothing. Every metric
is written through :func:`quotagov.handlers.metrics.emit`, one EMF line when it
happens, so an invocation with nothing to count (an empty batch, a retried event)
writes none and Powertools has no empty set to warn about.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from quotagov.composition import JobState, current
from quotagov.handlers.metrics import emit
from quotagov.handlers.sqs_batches import is_sqs_batch, process_batch
from quotagov.handlers.tracing import capture_lambda_handler

if TYPE_CHECKING:
    from quotagov.governance.job_state.updates import JobStateDeps, JobStateResult

# The use cases are imported where they are used, so that the function's cold start
# pays only for Powertools and the composition root (benchmarks/submit_path.py).

logger = Logger(service=os.environ.get("POWERTOOLS_SERVICE_NAME") or "job-state")
processor = BatchProcessor(event_type=EventType.SQS)


def job_state_deps() -> JobStateDeps:
    """This process's job-state dependencies (:attr:`quotagov.wiring.Services.job_state`)."""
    return current(JobState).job_state


@logger.inject_lambda_context(clear_state=True)
@capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Entry point: one EventBridge event, or an SQS batch of them.

    Returns:
        For SQS: ``{"batchItemFailures": [{"itemIdentifier": <messageId>}, ...]}``.
        For one event: ``{"outcome": tracked|unchanged|foreign|malformed, ...}``.
    """
    current(JobState)  # cold start: a missing setting fails here, before any work
    if is_sqs_batch(event):
        return process_batch(event, _record_handler, processor, context)
    return process_event(event, in_batch=False)


def _record_handler(record: SQSRecord) -> dict[str, Any]:
    from quotagov.handlers.service_job_events import MalformedEventError

    try:
        body = json.loads(record.body)
    except (TypeError, ValueError) as error:
        _malformed(f"body: not JSON ({error})", record.body, message_id=record.message_id)
        raise MalformedEventError(f"body: not JSON ({error})") from None
    return process_event(body, in_batch=True, message_id=record.message_id)


def process_event(event: Any, *, in_batch: bool, message_id: str | None = None) -> dict[str, Any]:
    """Parse one EventBridge event, update the job record, emit metrics.

    Raises:
        MalformedEventError: only when ``in_batch`` (so the SQS record fails alone).
        RecordNotVisibleYetError, JobStateConflictError, BatchError: retry the event.
    """
    from quotagov.governance.dispositions import DispositionInProgressError
    from quotagov.governance.job_state.updates import RecordNotVisibleYetError, apply_state_event
    from quotagov.handlers.service_job_events import MalformedEventError, parse_state_change

    try:
        parsed = parse_state_change(event)
        state_event = parsed.to_state_event()
    except (MalformedEventError, ValueError) as error:
        reason = error.reason if isinstance(error, MalformedEventError) else str(error)
        _malformed(reason, event, message_id=message_id)
        if in_batch:
            raise MalformedEventError(reason) from None
        return {"outcome": "malformed", "reason": reason}
    logger.append_keys(batchJobId=state_event.job_id, eventId=state_event.event_id)
    try:
        result = apply_state_event(state_event, job_state_deps())
    except (RecordNotVisibleYetError, DispositionInProgressError) as error:
        logger.warning("the event will be retried", extra={"reason": str(error)})
        emit("JobStateEventsDeferred", MetricUnit.Count, 1)
        raise
    emit("JobStateEvents", MetricUnit.Count, 1)
    _emit(result)
    logger.info(
        "service job event folded",
        extra={
            "outcome": result.outcome,
            "status": state_event.status,
            "submissionId": result.submission_id,
            "preemptionCount": result.summary.preemption_count if result.summary else None,
            "disposition": result.disposition.to_dict() if result.disposition else None,
        },
    )
    return {
        "outcome": result.outcome,
        "batchJobId": result.batch_job_id,
        "submissionId": result.submission_id,
        "disposition": result.disposition.status if result.disposition else None,
    }


def _malformed(reason: str, event: Any, *, message_id: str | None) -> None:
    logger.error(
        "malformed service job event",
        extra={"reason": reason, "messageId": message_id, "rawEvent": event},
    )
    emit("MalformedEvents", MetricUnit.Count, 1)


def _emit(result: JobStateResult) -> None:
    from quotagov.instance_types import gpu_hours

    if result.outcome == "foreign":
        logger.info("event of a job quotagov did not submit: recorded as foreign")
        emit("ForeignJobEvents", MetricUnit.Count, 1)
        return
    share = result.quota_share_name or "unknown"
    for preemption in result.new_preemptions:
        emit("Preemptions", MetricUnit.Count, 1, quotaShareName=share, kind=preemption.kind)
        emit(
            "PreemptionsByTeam",
            MetricUnit.Count,
            1,
            team=result.team,
            quotaShareName=share,
            kind=preemption.kind,
        )
        if preemption.lost_instance_seconds is not None:
            emit(
                "LostInstanceSeconds",
                MetricUnit.Seconds,
                preemption.lost_instance_seconds,
                quotaShareName=share,
            )
            lost = gpu_hours(result.instance_type, preemption.lost_instance_seconds)
            if lost is not None:
                emit(
                    "LostGpuHours", MetricUnit.NoUnit, lost, team=result.team, quotaShareName=share
                )
    if result.first_start_seconds is not None:
        emit(
            "SubmissionToFirstStart",
            MetricUnit.Seconds,
            result.first_start_seconds,
            quotaShareName=share,
        )
    if result.disposition_opened is not None and result.disposition is not None:
        emit(
            "Dispositions",
            MetricUnit.Count,
            1,
            dispositionType=result.disposition_opened,
            trigger=result.disposition.trigger,
        )
