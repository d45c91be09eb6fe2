"""A burst of 300 submissions against a simulated Batch that throttles above 5 calls/s.

The queue is moto SQS with the template's visibility timeout and redrive policy; the
driver (``sqs_driver.drain``) plays the event source mapping on a virtual clock, so the
whole run takes a few seconds of wall time.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from quotagov import composition
from quotagov.clock import ManualClock
from quotagov.governance.pacing import SUBMIT_CALLS_PER_SECOND, Pacer
from support.principals import ALICE, BOB

from .api import post_jobs
from .conftest import Stack, submission, training_payload
from .sqs_driver import drain, queue_depth

COUNT = 300


class RecordingPacer:
    """The real :class:`Pacer`, also noting the virtual time of every paced call."""

    def __init__(self, rate: float, clock: ManualClock) -> None:
        self._pacer = Pacer(rate, clock, clock.advance)
        self._clock = clock
        self.times: list[float] = []

    def __call__(self) -> None:
        self._pacer()
        self.times.append(self._clock.now())


def _send_burst(count: int) -> None:
    """``count`` submissions through ``POST /jobs`` (the only sender the queue accepts)."""
    for i in range(count):
        body = submission(
            clientRequestId=f"burst-{i}", serviceRequestPayload=training_payload(f"burst-{i}")
        )
        status, reply = post_jobs(body, ALICE if i % 2 else BOB)
        assert status == 202, reply


@pytest.mark.slow  # 300 submissions through moto SQS
def test_burst_of_300_ends_as_300_service_jobs_and_an_empty_dlq(stack: Stack, batch: Any) -> None:
    """Paced at 2 calls/s per worker (reserved concurrency 2: at most 4/s), under the 5/s."""
    rate = SUBMIT_CALLS_PER_SECOND
    batch.throttle_above(5.0, burst=5, operations=["SubmitServiceJob"])
    pacer = RecordingPacer(rate, stack.clock)
    composition.provide(submit_pacer=pacer)
    _send_burst(COUNT)

    report = drain(stack)

    assert queue_depth(stack) == (0, 0)
    assert queue_depth(stack, stack.dlq_url) == (0, 0)
    submitted = [
        i
        for i in stack.dynamodb.scan(TableName="quotagov-jobs")["Items"]
        if i["state"]["S"] == "SUBMITTED"
    ]
    assert len(submitted) == COUNT
    job_ids = {i["batchJobId"]["S"] for i in submitted}
    assert len(job_ids) == COUNT
    accepted = [request for op, request in batch.requests if op == "SubmitServiceJob"]
    assert len({r["clientToken"] for r in accepted}) == COUNT
    # Paced under the limit: Batch never throttled, nothing was retried.
    assert report.failures == []
    per_second = Counter(int(t) for t in pacer.times)
    assert max(per_second.values()) <= 5
    assert len(accepted) == COUNT
    assert report.invocations == COUNT // 10
