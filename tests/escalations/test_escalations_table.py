"""EscalationsTable on moto DynamoDB: round trip, conditional moves, budget counter, expiry."""

from __future__ import annotations

import threading
from dataclasses import replace

import boto3
import pytest

from quotagov.adapters.dynamodb_escalations import EscalationsTable, create_escalations_table
from quotagov.governance.model.escalation import (
    FINAL_STATUSES,
    MOVES,
    Escalation,
    EscalationStatus,
    IllegalEscalationMoveError,
)
from quotagov.governance.model.impact_preview import ImpactOutcome, ImpactPreview, PreemptedJob
from quotagov.governance.ports import BudgetSpentError, EscalationConflictError, OpenEscalationError

from .conftest import REGION

T0 = 1_764_547_200.0


def escalation(
    escalation_id: str, *, expires_at: float = T0 + 3600, job_id: str | None = None
) -> Escalation:
    """A PENDING request; each id has its own job unless ``job_id`` is given."""
    return Escalation(
        escalation_id=escalation_id,
        job_id=job_id or f"sub-for-{escalation_id}",
        batch_job_id="job-bg-2",
        job_name="bg-2",
        job_queue="ml-gov-queue",
        team="research",
        quota_share_name="background",
        requester="arn:aws:sts::111122223333:assumed-role/researcher/alice",
        requester_slack_id="U0ALICE",
        reason="paper deadline",
        current_priority=10,
        requested_level="high",
        requested_priority=50,
        status=EscalationStatus.PENDING,
        created_at=T0,
        expires_at=expires_at,
        preview=ImpactPreview(
            ImpactOutcome.PREEMPTS,
            "Approval starts bg-2 at once by preempting bg-1 (300 s of unsaved work).",
            (PreemptedJob("job-bg-1", "bg-1", "background", "IN_SHARE", 300.0),),
            1,
            None,
        ),
    )


def test_round_trip_keeps_every_field(escalations_table: EscalationsTable) -> None:
    original = escalation("esc-1")
    escalations_table.create_pending(original, budget_key="budget#research#0", budget_limit=3)
    assert escalations_table.get("esc-1") == original
    escalations_table.set_message("esc-1", "C0GOVERN", "1764547200.000001")
    stored = escalations_table.get("esc-1")
    assert stored is not None
    assert (stored.channel, stored.ts) == ("C0GOVERN", "1764547200.000001")
    assert escalations_table.get("budget#research#0") is None  # counters are not escalations


def test_budget_counter_refuses_beyond_the_limit_and_refunds(
    escalations_table: EscalationsTable,
) -> None:
    key = "budget#research#0"
    escalations_table.create_pending(escalation("esc-1"), budget_key=key, budget_limit=2)
    escalations_table.create_pending(escalation("esc-2"), budget_key=key, budget_limit=2)
    with pytest.raises(BudgetSpentError):
        escalations_table.create_pending(escalation("esc-3"), budget_key=key, budget_limit=2)
    assert escalations_table.get("esc-3") is None  # the transaction wrote nothing
    assert escalations_table.budget_used(key) == 2
    escalations_table.refund_budget(key)
    escalations_table.create_pending(escalation("esc-3"), budget_key=key, budget_limit=2)
    assert escalations_table.budget_used(key) == 2
    with pytest.raises(BudgetSpentError):
        escalations_table.create_pending(escalation("esc-4"), budget_key="b#x", budget_limit=0)


def test_duplicate_id_is_a_conflict_and_takes_no_budget(
    escalations_table: EscalationsTable,
) -> None:
    key = "budget#research#0"
    original = escalation("esc-1")
    escalations_table.create_pending(original, budget_key=key, budget_limit=5)
    other = replace(original, reason="another reason")
    with pytest.raises(EscalationConflictError):
        escalations_table.create_pending(other, budget_key=key, budget_limit=5)
    assert escalations_table.get("esc-1") == original
    assert escalations_table.budget_used(key) == 1
    # the very same request again is this write's own retry (its first answer lost):
    # it succeeds, and takes no second unit
    escalations_table.create_pending(original, budget_key=key, budget_limit=5)
    assert escalations_table.budget_used(key) == 1


def test_one_open_escalation_per_job_takes_no_budget_and_is_freed_by_its_holder(
    escalations_table: EscalationsTable,
) -> None:
    key = "budget#research#0"
    escalations_table.create_pending(
        escalation("esc-1", job_id="sub-1"), budget_key=key, budget_limit=5
    )
    assert escalations_table.open_escalation_id("sub-1") == "esc-1"
    with pytest.raises(OpenEscalationError) as held:
        escalations_table.create_pending(
            escalation("esc-2", job_id="sub-1"), budget_key=key, budget_limit=5
        )
    assert held.value.escalation_id == "esc-1"
    assert escalations_table.budget_used(key) == 1
    assert escalations_table.get("esc-2") is None
    assert escalations_table.release_job("sub-1", "esc-2") is False  # not the holder
    assert escalations_table.open_escalation_id("sub-1") == "esc-1"
    assert escalations_table.release_job("sub-1", "esc-1") is True
    assert escalations_table.release_job("sub-1", "esc-1") is False  # already free
    assert escalations_table.open_escalation_id("sub-1") is None
    escalations_table.create_pending(
        escalation("esc-2", job_id="sub-1"), budget_key=key, budget_limit=5
    )
    assert escalations_table.open_escalation_id("sub-1") == "esc-2"
    assert escalations_table.budget_used(key) == 2
    # Lock items carry no status: the byStatus index never lists them.
    assert [e.escalation_id for e in escalations_table.with_status(EscalationStatus.PENDING)] == [
        "esc-1",
        "esc-2",
    ]


def test_transition_applies_once(escalations_table: EscalationsTable) -> None:
    escalations_table.create_pending(escalation("esc-1"), budget_key="b", budget_limit=5)
    first = escalations_table.transition_if_status(
        "esc-1",
        EscalationStatus.PENDING,
        {"status": EscalationStatus.APPROVED, "decided_by": "U0CAROL", "decided_at": T0 + 5},
    )
    assert first is not None
    assert (first.status, first.decided_by, first.decided_at) == (
        EscalationStatus.APPROVED,
        "U0CAROL",
        T0 + 5,
    )
    second = escalations_table.transition_if_status(
        "esc-1",
        EscalationStatus.PENDING,
        {"status": EscalationStatus.DENIED, "decided_by": "U0ERIN", "decided_at": T0 + 6},
    )
    assert second is None
    unknown = {"status": EscalationStatus.DENIED}
    assert escalations_table.transition_if_status("nope", EscalationStatus.PENDING, unknown) is None
    with pytest.raises(ValueError, match="nothing to change"):
        escalations_table.transition_if_status("esc-1", EscalationStatus.APPROVED, {})
    failed = escalations_table.transition_if_status(
        "esc-1",
        EscalationStatus.APPROVED,
        {"status": EscalationStatus.APPLY_FAILED, "error": "boom", "apply_attempts": 1},
    )
    assert failed is not None and failed.error == "boom"
    # APPLY_FAILED -> APPLIED is no move (MOVES): a retry claims the request again first;
    # the refused write changes nothing
    with pytest.raises(IllegalEscalationMoveError, match="no move from APPLY_FAILED to APPLIED"):
        escalations_table.transition_if_status(
            "esc-1", EscalationStatus.APPLY_FAILED, {"status": EscalationStatus.APPLIED}
        )
    assert escalations_table.get("esc-1") == failed
    claimed = escalations_table.transition_if_status(
        "esc-1", EscalationStatus.APPLY_FAILED, {"status": EscalationStatus.APPROVED}
    )
    assert claimed is not None
    applied = escalations_table.transition_if_status(
        "esc-1",
        EscalationStatus.APPROVED,
        {"status": EscalationStatus.APPLIED, "error": None, "applied_at": T0 + 9},
    )
    assert applied is not None
    assert (applied.status, applied.error, applied.decided_by) == (
        EscalationStatus.APPLIED,
        None,
        "U0CAROL",
    )


def test_due_for_expiry_lists_only_overdue_pending(escalations_table: EscalationsTable) -> None:
    escalations_table.create_pending(
        escalation("old", expires_at=T0 + 10), budget_key="b", budget_limit=9
    )
    escalations_table.create_pending(
        escalation("new", expires_at=T0 + 100), budget_key="b", budget_limit=9
    )
    escalations_table.create_pending(
        escalation("decided", expires_at=T0 + 5), budget_key="b", budget_limit=9
    )
    escalations_table.transition_if_status(
        "decided", EscalationStatus.PENDING, {"status": EscalationStatus.DENIED}
    )
    assert [e.escalation_id for e in escalations_table.due_for_expiry(T0 + 50)] == ["old"]
    assert [e.escalation_id for e in escalations_table.with_status(EscalationStatus.DENIED)] == [
        "decided"
    ]


def test_simultaneous_requests_never_overspend_a_budget(moto_server: str) -> None:
    client = boto3.client("dynamodb", region_name=REGION, endpoint_url=moto_server)
    create_escalations_table(client, "escalations-race")
    table = EscalationsTable(client, "escalations-race")
    barrier = threading.Barrier(12)
    outcomes: dict[str, str] = {}

    def request(n: int) -> None:
        own = EscalationsTable(
            boto3.client("dynamodb", region_name=REGION, endpoint_url=moto_server),
            "escalations-race",
        )
        barrier.wait()
        try:
            own.create_pending(
                escalation(f"esc-{n}"), budget_key="budget#research#0", budget_limit=1
            )
            outcomes[f"esc-{n}"] = "stored"
        except BudgetSpentError:
            outcomes[f"esc-{n}"] = "refused"

    threads = [threading.Thread(target=request, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stored = [k for k, v in outcomes.items() if v == "stored"]
    assert len(stored) == 1 and len(outcomes) == 12
    assert table.budget_used("budget#research#0") == 1
    assert [e.escalation_id for e in table.with_status(EscalationStatus.PENDING)] == stored


def test_the_moves_table_matches_the_statuses() -> None:
    """Every status has a row; final statuses lead nowhere; every open one somewhere."""
    assert set(MOVES) == {None, *EscalationStatus}
    assert {s for s, targets in MOVES.items() if s is not None and not targets} == FINAL_STATUSES


@pytest.mark.parametrize("final", sorted(FINAL_STATUSES))
def test_a_decided_request_is_never_moved_again(
    escalations_table: EscalationsTable, final: EscalationStatus
) -> None:
    """A final request refuses every status write, before anything is sent to DynamoDB."""
    stored = replace(escalation("esc-9"), status=final, decided_by="U0CAROL", decided_at=T0)
    escalations_table.put_new(stored)
    for target in EscalationStatus:
        if target is final:
            continue
        with pytest.raises(IllegalEscalationMoveError):
            escalations_table.transition_if_status("esc-9", final, {"status": target})
    assert escalations_table.get("esc-9") == stored
