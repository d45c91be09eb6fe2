"""The audit is order-independent: CloudTrail records delivered in any order, and more
than once, give the same audit records and findings as in-order delivery.

EventBridge and CloudTrail promise neither order nor single delivery; the audit holds
each call for its settling window and writes it in ``(eventTime, eventID)`` order with
its before/after replayed from the resource's ordered history.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.support import (
    CONTROLLER_ROLE,
    TABLE,
    create_audit_table,
    load_call,
    share_arn,
    submit,
)
from quotagov.adapters.dynamodb_audit import DynamoDBChainStore
from quotagov.adapters.dynamodb_known import DynamoDBVersionStore
from quotagov.clock import ManualClock
from quotagov.governance.audit.cloudtrail_calls import CloudTrailApiCall
from quotagov.governance.audit.trail import AuditTrail
from quotagov.policy import Policy
from quotagov_tools.batch_simulated import SimulatedBatch

XL = "ml.g5.xlarge"
T0 = datetime(2026, 5, 4, 10, 5, 0, tzinfo=UTC)  # the clock starts at 10:00
WINDOW = 300.0
_tables = itertools.count(1)


def change(
    share: str, at: datetime, event_id: str, limit: int, *, error: str | None = None
) -> CloudTrailApiCall:
    """alice's ``UpdateQuotaShare`` of ``share`` to ``limit`` x ml.g5.xlarge at ``at``;
    with ``error``, the failed call CloudTrail records with that ``errorCode``."""
    base = load_call("update-quota-share")
    update: dict[str, Any] = {
        "eventTime": at,
        "eventID": event_id,
        "requestParameters": {
            "quotaShareArn": share_arn(share),
            "capacityLimits": [{"capacityUnit": XL, "maxCapacity": limit}],
        },
    }
    if error is not None:
        update |= {"errorCode": error, "errorMessage": "not authorized", "responseElements": None}
    return base.model_copy(update=update)


def world(
    dynamodb: Any, batch: SimulatedBatch, policy: Policy, clock: ManualClock, window: float
) -> tuple[AuditTrail, DynamoDBChainStore]:
    """An audit over its own table (so two deliveries can be compared side by side)."""
    table = f"{TABLE}-{next(_tables)}"
    create_audit_table(dynamodb, table)
    chains = DynamoDBChainStore(table, dynamodb)
    trail = AuditTrail(
        chains=chains,
        versions=DynamoDBVersionStore(table, dynamodb),
        batch=batch,
        policy=policy,
        clock=clock,
        controller_principals=[CONTROLLER_ROLE],
        settle_seconds=window,
    )
    return trail, chains


def records(chains: DynamoDBChainStore) -> list[dict[str, Any]]:
    return list(chains.records("ml-gov-queue"))


def two_release_jobs_running(batch: SimulatedBatch) -> None:
    """The release share (policy: 2 x ml.g5.xlarge, RESERVE) runs two one-instance jobs."""
    for name in ("rel-1", "rel-2"):
        submit(batch, name, "release", run_seconds=10**7)
    batch.advance(60)


CUT_MESSAGE = (
    f"quota share release: {XL} capacity limit lowered to 1 from 2 while 2 instances are "
    "in use by 2 job(s); the excess becomes preemptible even though the share is RESERVE"
)


def the_day(order: str) -> list[CloudTrailApiCall]:
    """Raise to 4, back to 2, the cut to 1 (two jobs run), raise to 3: in order, or the
    problem order (the later change first, then the cut, then the earlier ones)."""
    calls = [
        change("release", T0, "ev-a", 4),
        change("release", T0 + timedelta(seconds=10), "ev-b", 2),
        change("release", T0 + timedelta(seconds=20), "ev-cut", 1),
        change("release", T0 + timedelta(seconds=30), "ev-d", 3),
    ]
    return calls if order == "in-order" else [calls[3], calls[2], calls[1], calls[0]]


def test_capacity_cut_is_recorded_alike_in_order_and_out_of_order(
    dynamodb: Any, batch: SimulatedBatch, policy: Policy, clock: ManualClock
) -> None:
    two_release_jobs_running(batch)
    delivered: dict[str, list[dict[str, Any]]] = {}
    worlds = {o: world(dynamodb, batch, policy, clock, WINDOW) for o in ("in-order", "problem")}
    clock.set(T0.timestamp() + 40)  # everything arrives within the window
    for order, (trail, chains) in worlds.items():
        answers = [trail.record_call(call) for call in the_day(order)]
        # held, nothing written yet; each answer says when its window ends
        assert [a.record for a in answers] == [None] * 4
        held = {a.held_until for a in answers}
        assert held == {f"2026-05-04T10:{m}Z" for m in ("10:00", "10:10", "10:20", "10:30")}
        assert records(chains) == []
    clock.set(T0.timestamp() + 30 + WINDOW)
    for order, (trail, chains) in worlds.items():
        written = trail.release()
        assert [r.record["eventId"] for r in written if r.record] == [
            "ev-a",
            "ev-b",
            "ev-cut",
            "ev-d",
        ]
        delivered[order] = records(chains)
    assert delivered["problem"] == delivered["in-order"]
    cut = delivered["problem"][2]
    assert cut["eventId"] == "ev-cut" and cut["seq"] == 3
    assert cut["difference"] == [
        {"path": f"capacityLimits[{XL}].maxCapacity", "before": 2, "after": 1}
    ]
    assert cut["before"]["capacityLimits"] == [{"capacityUnit": XL, "maxCapacity": 2}]
    assert cut["beforeSource"] == "last-known"
    assert cut["findings"][0] == {
        "code": "CAPACITY_LIMIT_BELOW_USE",
        "severity": "high",
        "message": CUT_MESSAGE,
    }
    assert [d["difference"][0]["before"] for d in delivered["problem"]] == [2, 4, 2, 1]
    assert [d["difference"][0]["after"] for d in delivered["problem"]] == [4, 2, 1, 3]
    # a redelivery of any of them after release is a duplicate, never a second record
    trail, chains = worlds["problem"]
    again = trail.record_call(the_day("in-order")[2])
    assert not again.created and again.record == cut
    assert len(records(chains)) == 4


def test_a_record_after_its_window_is_recorded_late_from_the_ordered_history(
    dynamodb: Any, batch: SimulatedBatch, policy: Policy, clock: ManualClock
) -> None:
    two_release_jobs_running(batch)
    trail, chains = world(dynamodb, batch, policy, clock, WINDOW)
    a, b, cut, d = the_day("in-order")
    clock.set(T0.timestamp() + 40)
    for call in (a, b, d):
        trail.record_call(call)
    clock.set(T0.timestamp() + 20 + WINDOW + 100)  # the cut arrives 400 s after it was made
    late = trail.record_call(cut)
    assert late.created and late.record is not None
    stored = records(chains)
    assert [r["eventId"] for r in stored] == ["ev-a", "ev-b", "ev-d", "ev-cut"]
    # its own before/after come from the ordered history: 2 -> 1, with the use at eventTime
    assert late.record["difference"] == [
        {"path": f"capacityLimits[{XL}].maxCapacity", "before": 2, "after": 1}
    ]
    assert late.record["findings"][0]["message"] == CUT_MESSAGE
    assert late.record["findings"][-1] == {
        "code": "RECORDED_LATE",
        "severity": "medium",
        "message": "delivered 400 s after its eventTime, past the 300 s settling window: "
        "later changes of this resource were recorded before it, and their before may not "
        "include it",
    }
    # the later change, written before the cut arrived, could not know it: 2 -> 3
    assert stored[2]["difference"][0] == {
        "path": f"capacityLimits[{XL}].maxCapacity",
        "before": 2,
        "after": 3,
    }


def test_the_cut_finding_does_not_depend_on_before(
    dynamodb: Any, batch: SimulatedBatch, policy: Policy, clock: ManualClock
) -> None:
    """Without a window (each call written on arrival), the later change arriving first
    cannot mislead the cut's finding: the new limit against the use at eventTime."""
    two_release_jobs_running(batch)
    trail, _ = world(dynamodb, batch, policy, clock, 0)
    clock.set(T0.timestamp() + 40)
    answers = {c.eventID: trail.record_call(c) for c in the_day("problem")}
    cut = answers["ev-cut"].record
    assert cut is not None
    assert cut["findings"][0]["code"] == "CAPACITY_LIMIT_BELOW_USE"


SHARES = ("release", "applied", "research")


#: One drawn call: (share, second of the day, new limit, failed with AccessDenied).
Drawn = tuple[str, int, int, bool]


@st.composite
def days(draw: st.DrawFn) -> list[Drawn]:
    """A day of UpdateQuotaShare records on several shares, several changes each
    (some in the same second), some failed with AccessDenied."""
    calls: list[Drawn] = []
    for share in SHARES:
        for _ in range(draw(st.integers(min_value=1, max_value=3))):
            second = draw(st.sampled_from((0, 1, 3600, 7200)) | st.integers(0, 86399))
            limit = draw(st.integers(min_value=0, max_value=5))
            calls.append((share, second, limit, draw(st.integers(0, 4)) == 0))
    return calls


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(drawn=days(), data=st.data())
def test_any_delivery_order_with_duplicates_gives_the_in_order_records(
    dynamodb: Any,
    batch: SimulatedBatch,
    policy: Policy,
    clock: ManualClock,
    drawn: list[Drawn],
    data: st.DataObject,
) -> None:
    start = datetime.fromtimestamp(clock.now() - clock.now() % 3600 + 3600, tz=UTC)
    day = [
        change(
            share,
            start + timedelta(seconds=second),
            f"ev-{i:02d}",
            limit,
            error="AccessDenied" if failed else None,
        )
        for i, (share, second, limit, failed) in enumerate(drawn)
    ]
    if not batch.list_service_jobs(jobQueue=policy.jobQueue).get("jobSummaryList"):
        two_release_jobs_running(batch)
    shuffled = data.draw(st.permutations(day), label="delivery order")
    repeats = data.draw(st.lists(st.sampled_from(day), max_size=6), label="duplicates")
    positions = data.draw(
        st.lists(st.integers(0, len(day)), min_size=len(repeats), max_size=len(repeats))
    )
    delivery = list(shuffled)
    for call, at in zip(repeats, positions, strict=True):
        delivery.insert(at, call)
    in_order = sorted(day, key=lambda c: (c.event_ms, c.eventID))
    window = 2 * 86400.0  # the whole day arrives within its window
    reference, reference_chains = world(dynamodb, batch, policy, clock, window)
    tested, tested_chains = world(dynamodb, batch, policy, clock, window)
    clock.set(start.timestamp() + 86400)
    for call in in_order:
        reference.record_call(call)
    for call in delivery:
        tested.record_call(call)
    clock.set(start.timestamp() + 86400 + window)
    reference.release()
    tested.release()
    expected = records(reference_chains)
    got = records(tested_chains)
    assert got == expected
    assert [r["eventId"] for r in got] == [c.eventID for c in in_order]
    # failed calls are attempts, never changes
    failed = {c.eventID for c in day if c.errorCode}
    assert {r["eventId"] for r in got if r["kind"] == "ATTEMPT"} == failed
    assert all(r["before"] is None and r["after"] is None for r in got if r["kind"] == "ATTEMPT")
