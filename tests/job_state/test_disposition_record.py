"""The disposition record: the stored map read and written unchanged, the table of moves,
and the error kinds."""

from __future__ import annotations

from typing import Any

import pytest

from quotagov.governance.dispositions import (
    FINAL_STATUSES,
    MOVES,
    DispositionConflictError,
    DispositionForbiddenError,
    DispositionInProgressError,
    DispositionNotFoundError,
    DispositionRecord,
    DispositionStatus,
    IllegalMoveError,
    InvalidChoiceError,
)
from quotagov.governance.dispositions.record import check_move
from quotagov.governance.errors import (
    ConflictError,
    ForbiddenError,
    GovernanceError,
    InvalidRequestError,
    NotFoundError,
)
from quotagov.governance.lease import Lease

STORED: dict[str, Any] = {
    "status": "applying",
    "trigger": "retries-exhausted",
    "policyAction": "ask-owner",
    "owner": "arn:aws:sts::111122223333:assumed-role/release/frank",
    "openedAt": 1777889000,
    "preemptionCount": 2,
    "preemptionRetriesBeforeTermination": 1,
    "reason": "FAILED after 2 preemption(s)",
    "choices": ["resubmit", "abandon"],
    "choice": "resubmit",
    "decidedBy": "U0FRANK",
    "decidedAt": 1777889100.5,
    "decisionSource": "slack",
    "successorId": "rel-2-r1",
    "targetShare": "reserved",
    "leaseUntil": 1777889160.5,
    "message": {"channel": "U0FRANK", "ts": "1777889001.000100"},
    "lastError": "ServerException",
    "addedByALaterVersion": {"kept": True},
}


def test_a_stored_disposition_is_written_back_unchanged() -> None:
    record = DispositionRecord.from_item(STORED)
    assert record.status is DispositionStatus.APPLYING
    assert record.lease == Lease(1777889160.5)
    assert record.offered == ("resubmit", "abandon")
    assert record.to_item() == STORED


def test_a_released_lease_is_stored_as_zero_and_unset_fields_are_left_out() -> None:
    record = DispositionRecord.from_item(STORED).with_changes(
        lease=Lease(1.0).released(), message=None, last_error=None
    )
    item = record.to_item()
    assert item["leaseUntil"] == 0
    assert "message" not in item and "lastError" not in item
    assert record.lease_until == 0


def test_the_table_of_moves() -> None:
    assert set(FINAL_STATUSES) == {"applied", "abandoned", "not-needed"}
    assert set(MOVES) == {None, *DispositionStatus}
    reachable = {target for targets in MOVES.values() for target in targets}
    assert reachable == set(DispositionStatus)
    check_move(None, DispositionStatus.PENDING_OWNER)
    check_move(DispositionStatus.APPLYING, DispositionStatus.APPLYING)  # the lease step
    for source, target in [
        (DispositionStatus.APPLIED, DispositionStatus.APPLYING),
        (DispositionStatus.PENDING_OWNER, DispositionStatus.APPLIED),
        (None, DispositionStatus.APPLIED),
    ]:
        with pytest.raises(IllegalMoveError):
            check_move(source, target)


def test_the_errors_are_of_the_governance_kinds() -> None:
    assert issubclass(DispositionNotFoundError, NotFoundError)
    assert issubclass(DispositionForbiddenError, ForbiddenError)
    assert issubclass(DispositionConflictError, ConflictError)
    assert issubclass(InvalidChoiceError, InvalidRequestError)
    assert not issubclass(DispositionInProgressError, GovernanceError)
    error = InvalidChoiceError("choice: 'x' is not one of resubmit, reclassify, abandon")
    assert error.faults == [("choice", "'x' is not one of resubmit, reclassify, abandon")]
    assert DispositionConflictError("no", STORED).current == STORED
