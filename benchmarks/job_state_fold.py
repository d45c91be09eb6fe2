"""Speed of folding service-job events into a job's state (pure Python, no AWS).

Prints events folded per second and the size of the stored facts for a job with many
preemptions (the facts grow with attempts; the DynamoDB item limit is 400 KB).
Run: ``.venv/bin/python benchmarks/job_state_fold.py``.
"""

from __future__ import annotations

import json
import random
import time

from quotagov.governance.job_state import StateEvent, fold, summarize


def job_events(job_id: str, preemptions: int) -> list[StateEvent]:
    """RUNNABLE/RUNNING/RUNNABLE... events of a job preempted ``preemptions`` times."""
    t = 1_777_885_000_000
    attempts: list[dict[str, object]] = []
    events = []
    for i in range(preemptions + 1):
        arn = f"arn:aws:sagemaker:eu-west-1:111122223333:training-job/AWSBatch{job_id}{i:032x}"
        attempts.append(
            {"serviceResourceId": {"name": "TrainingJobArn", "value": arn}, "startedAt": t + 60_000}
        )
        running = {
            "jobId": job_id,
            "status": "RUNNING",
            "createdAt": 1_777_885_000_000,
            "attempts": [dict(a) for a in attempts],
        }
        events.append(StateEvent.from_detail(running, event_id=f"r{i}", event_time_ms=t + 60_000))
        t += 1_500_000
        attempts[-1]["stoppedAt"] = t
        status = "FAILED" if i == preemptions else "RUNNABLE"
        requeued = {
            "jobId": job_id,
            "status": status,
            "createdAt": 1_777_885_000_000,
            "attempts": [dict(a) for a in attempts],
            "preemptionSummary": {
                "preemptedAttemptCount": i + 1,
                "recentPreemptedAttempts": list(reversed(attempts))[:5],
            },
        }
        events.append(StateEvent.from_detail(requeued, event_id=f"q{i}", event_time_ms=t))
    return events


def main() -> None:
    for preemptions in (2, 20, 100):
        events = job_events("bench", preemptions) * 2
        random.Random(1).shuffle(events)
        start = time.perf_counter()
        rounds = max(1, 2000 // len(events))
        for _ in range(rounds):
            state = None
            for event in events:
                state = fold(state, event)
        elapsed = time.perf_counter() - start
        assert state is not None
        summary = summarize(state, checkpoint_interval_seconds=600, instance_count=2)
        size = len(json.dumps(state.to_item())) + len(json.dumps(summary.to_item()))
        print(
            f"preemptions={preemptions:4d} events={len(events):4d} "
            f"fold={rounds * len(events) / elapsed:10.0f} events/s "
            f"stored facts+summary={size / 1024:7.1f} KiB"
        )


if __name__ == "__main__":
    main()
