"""What the release of held CloudTrail calls reads and writes: each held call is read by
one release and written once, a release with nothing due reads two small partitions and
writes nothing, and a call held after a release passed its time is not left behind.

The schedule runs the release every minute, so its cost when nothing is held is paid
every minute of every day (``benchmarks/aws_cost.py``, "schedules per hour").
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

from audit.support import CONTROLLER_ROLE, TABLE, load_call, share_arn
from audit.tamper_world import CountingSealer
from quotagov.adapters.dynamodb_audit import DynamoDBChainStore
from quotagov.adapters.dynamodb_known import DynamoDBVersionStore
from quotagov.adapters.kms_audit import KmsRecordSealer
from quotagov.clock import ManualClock
from quotagov.governance.audit.chain import ChainWriter
from quotagov.governance.audit.cloudtrail_calls import CloudTrailApiCall
from quotagov.governance.audit.known import RELEASED, STAGED
from quotagov.governance.audit.trail import STAGE_KEY, AuditTrail
from quotagov.governance.ports import Version
from quotagov.policy import Policy
from quotagov_tools.batch_simulated import SimulatedBatch
from support.aws import REGION

XL = "ml.g5.xlarge"
T0 = datetime(2026, 5, 4, 10, 5, 0, tzinfo=UTC)  # the clock starts at 10:00
WINDOW = 300.0


class CountingVersions(DynamoDBVersionStore):
    """The audit table's version store, noting every read of the held calls and the
    watermark, and able to run something just before a put lands."""

    def __init__(self, table_name: str, client: Any) -> None:
        super().__init__(table_name, client)
        self.reads: list[tuple[str, str, int]] = []  # (method, namespace, versions read)
        self.puts: list[tuple[str, int]] = []  # (namespace, at_ms)
        self.before_put: Any = None

    def put(self, namespace: str, key: str, at_ms: int, tag: str, value: Mapping[str, Any]) -> None:
        if self.before_put is not None and namespace == STAGED:
            hook, self.before_put = self.before_put, None
            hook()
        self.puts.append((namespace, at_ms))
        super().put(namespace, key, at_ms, tag, value)

    def latest(
        self, namespace: str, key: str, *, before_ms: int | None = None, since_ms: int = 0
    ) -> Version | None:
        found = super().latest(namespace, key, before_ms=before_ms, since_ms=since_ms)
        self.reads.append(("latest", namespace, 0 if found is None else 1))
        return found

    def versions(
        self, namespace: str, key: str, *, since_ms: int = 0, before_ms: int | None = None
    ) -> list[Version]:
        found = super().versions(namespace, key, since_ms=since_ms, before_ms=before_ms)
        self.reads.append(("versions", namespace, len(found)))
        return found

    def release_reads(self) -> list[tuple[str, str, int]]:
        """The reads of the held calls and the watermark, then forget them."""
        seen = [r for r in self.reads if r[1] in (STAGED, RELEASED)]
        self.reads.clear()
        return seen


def change(share: str, at: datetime, event_id: str, limit: int) -> CloudTrailApiCall:
    """alice's ``UpdateQuotaShare`` of ``share`` to ``limit`` x ml.g5.xlarge at ``at``."""
    return load_call("update-quota-share").model_copy(
        update={
            "eventTime": at,
            "eventID": event_id,
            "requestParameters": {
                "quotaShareArn": share_arn(share),
                "capacityLimits": [{"capacityUnit": XL, "maxCapacity": limit}],
            },
        }
    )


def audit(
    dynamodb: Any, batch: SimulatedBatch, policy: Policy, clock: ManualClock
) -> tuple[AuditTrail, CountingVersions, DynamoDBChainStore, CountingSealer]:
    """The audit over the tests' table, its records sealed with a KMS key on moto."""
    versions = CountingVersions(TABLE, dynamodb)
    chains = DynamoDBChainStore(TABLE, dynamodb)
    kms = boto3.client("kms", region_name=REGION)
    key = kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")["KeyMetadata"]
    sealer = CountingSealer(KmsRecordSealer(key["KeyId"], kms))
    trail = AuditTrail(
        chains=chains,
        versions=versions,
        batch=batch,
        policy=policy,
        clock=clock,
        controller_principals=[CONTROLLER_ROLE],
        settle_seconds=WINDOW,
        writer=ChainWriter(chains, sealer=sealer),
    )
    return trail, versions, chains, sealer


def event_ids(chains: DynamoDBChainStore) -> list[str]:
    return [str(r["eventId"]) for r in chains.records("ml-gov-queue")]


def test_each_held_call_is_read_by_one_release_and_an_idle_release_reads_two_small_queries(
    dynamodb: Any, batch: SimulatedBatch, policy: Policy, clock: ManualClock
) -> None:
    trail, versions, chains, sealer = audit(dynamodb, batch, policy, clock)
    clock.set(T0.timestamp() + 40)
    for second, event_id, limit in ((0, "ev-a", 3), (10, "ev-b", 1), (200, "ev-c", 2)):
        trail.record_call(change("release", T0 + timedelta(seconds=second), event_id, limit))
    versions.release_reads()

    clock.set(T0.timestamp() + 10 + WINDOW)  # ev-a's and ev-b's windows have passed
    written = trail.release()
    assert [r.record["eventId"] for r in written if r.record] == ["ev-a", "ev-b"]
    # one sealed run for the two records: one GenerateMac, the seal on the last record
    assert sealer.generated == 1
    stored = list(chains.records("ml-gov-queue"))
    assert [r.get("seal") is not None for r in stored] == [False, True]
    assert versions.release_reads() == [("latest", RELEASED, 0), ("versions", STAGED, 2)]

    for minute in range(1, 4):  # the schedule, every minute; ev-c's window ends at +500 s
        clock.set(T0.timestamp() + 10 + WINDOW + 60 * minute)
        assert trail.release() == []
        # the watermark and an empty range: nothing already written is read again
        assert versions.release_reads() == [("latest", RELEASED, 1), ("versions", STAGED, 0)]

    clock.set(T0.timestamp() + 200 + WINDOW)
    assert [r.record["eventId"] for r in trail.release() if r.record] == ["ev-c"]
    assert versions.release_reads() == [("latest", RELEASED, 1), ("versions", STAGED, 1)]
    assert event_ids(chains) == ["ev-a", "ev-b", "ev-c"]
    # the watermark moved twice, once per release that wrote something
    marks = [at for namespace, at in versions.puts if namespace == RELEASED]
    assert marks == [
        int((T0.timestamp() + 10) * 1000),
        int((T0.timestamp() + 200) * 1000),
    ]


def test_a_call_held_while_a_release_passed_its_time_is_written_by_its_holder(
    dynamodb: Any, batch: SimulatedBatch, policy: Policy, clock: ManualClock
) -> None:
    """The race the watermark must survive: a call is judged within its window, then a
    release (another invocation) reads the held calls and moves the watermark past
    the call's time, and only then does the call's hold land. No later release scans
    behind the watermark, so the holder writes it, in order, exactly once."""
    trail, versions, chains, _ = audit(dynamodb, batch, policy, clock)
    clock.set(T0.timestamp() + 15)
    trail.record_call(change("release", T0 + timedelta(seconds=11), "ev-next", 3))
    racing = change("release", T0 + timedelta(seconds=10), "ev-race", 1)

    def a_release_runs_first() -> None:
        # the hold's put is slow: the window passes and the schedule's release runs
        clock.set(T0.timestamp() + 11 + WINDOW)
        released = trail.release()
        assert [r.record["eventId"] for r in released if r.record] == ["ev-next"]

    clock.set(T0.timestamp() + 10 + WINDOW - 0.5)  # within the window when judged
    versions.before_put = a_release_runs_first
    answer = trail.record_call(racing)

    mark = versions.latest(RELEASED, STAGE_KEY)
    assert mark is not None and mark.at_ms > racing.event_ms  # the release passed it
    assert answer.created and answer.record is not None
    assert answer.record["eventId"] == "ev-race" and answer.record["seq"] == 2
    # written after the later call (its release could not wait for it), exactly once
    assert event_ids(chains) == ["ev-next", "ev-race"]
    clock.advance(600)
    assert trail.release() == []
    assert trail.record_call(racing).created is False
    assert event_ids(chains) == ["ev-next", "ev-race"]


def test_a_call_held_well_within_its_window_waits_for_the_release(
    dynamodb: Any, batch: SimulatedBatch, policy: Policy, clock: ManualClock
) -> None:
    trail, _, chains, _ = audit(dynamodb, batch, policy, clock)
    clock.set(T0.timestamp() + WINDOW - 2)  # 2 s left: more than the clock allowance
    answer = trail.record_call(change("release", T0, "ev-a", 3))
    assert answer.record is None and answer.held_until == "2026-05-04T10:10:00Z"
    assert event_ids(chains) == []
    clock.advance(2)
    assert [r.record["eventId"] for r in trail.release() if r.record] == ["ev-a"]
