"""Job-record ports: the ``JobsTable`` repository and the submission queue.

- :class:`JobsRepository` and its errors: every job item as a :class:`JobRecord`, for
  every use case (adapter: ``quotagov.adapters.dynamodb_jobs``). Its writes are named
  after their conditions.
- :class:`SubmissionQueue`: carries submission ids from the API to the submit worker
  (adapter: ``quotagov.adapters.sqs_queue``).
- :class:`SuccessorSubmitter`: how a disposition's successor reaches Batch.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Protocol

from quotagov.governance.model.job import JobRecord, SubmissionState


class JobRecordError(Exception):
    """Base of the repository's errors. ``submission_id`` names the record."""

    def __init__(self, submission_id: str, message: str) -> None:
        super().__init__(f"job record {submission_id}: {message}")
        self.submission_id = submission_id


class JobRecordExistsError(JobRecordError):
    """:meth:`JobsRepository.create_if_absent` found a record with the same ``pk``."""


class JobRecordNotFoundError(JobRecordError):
    """No record has this submission id."""


class JobRecordConflictError(JobRecordError):
    """A conditional write lost: the record's ``version`` or ``state`` was not the expected one.

    Attributes:
        current: the record as stored now, when the store returned it (else None).
    """

    def __init__(self, submission_id: str, message: str, current: JobRecord | None) -> None:
        super().__init__(submission_id, message)
        self.current = current


class JobsRepository(Protocol):
    """Storage of :class:`JobRecord` items (``JobsTable``); every write is conditional
    and named after its condition.

    The submission writes (:meth:`create_if_absent`, :meth:`update_if_expected`,
    :meth:`mark_submitted_if_job_unset`) set ``updatedAt`` (epoch seconds, from the
    repository's clock) and increment ``version`` by one; the job-state and disposition
    writes touch only their own attributes.
    """

    def create_if_absent(self, record: JobRecord) -> JobRecord:
        """Store a new record if no item has ``record.pk`` (``version`` becomes 1).

        Raises:
            JobRecordExistsError: an item with ``record.pk`` exists (nothing written).
        """
        ...

    def get(self, submission_id: str) -> JobRecord | None:
        """The record of ``submission_id`` (strongly consistent read), or None."""
        ...

    def find_submission_id(self, batch_job_id: str) -> str | None:
        """The submission id whose ``batchJobId`` is ``batch_job_id`` (GSI
        ``byBatchJobId``, eventually consistent; answers may be cached), or None."""
        ...

    def list_team(
        self,
        team: str,
        *,
        limit: int,
        start: Mapping[str, Any] | None = None,
        keep: Callable[[JobRecord], bool] | None = None,
    ) -> tuple[list[JobRecord], dict[str, Any] | None]:
        """Up to ``limit`` of ``team``'s records, newest first, that ``keep`` accepts,
        and the key the next page starts at (None: no more).

        Raises:
            ValueError: ``start`` is not a key this listing of ``team`` returned.
        """
        ...

    def get_by_batch_job_id(self, batch_job_id: str) -> JobRecord | None:
        """The record whose ``batchJobId`` is ``batch_job_id`` (GSI ``byBatchJobId``), or None.

        The index is eventually consistent; callers that just wrote the record should
        use :meth:`get`.
        """
        ...

    def in_state_since(
        self, state: SubmissionState, updated_before: int, *, limit: int
    ) -> list[JobRecord]:
        """Records in ``state`` not written since ``updated_before`` (epoch seconds).

        Oldest ``updatedAt`` first, at most ``limit`` of them (GSI ``byState`` on
        ``state`` + ``updatedAt``; eventually consistent, so callers re-check with a
        conditional write).
        """
        ...

    def update_if_expected(
        self,
        submission_id: str,
        changes: Mapping[str, Any],
        *,
        expected_version: int | None = None,
        expected_states: Collection[SubmissionState] | None = None,
    ) -> JobRecord:
        """Set the attributes in ``changes`` (a None value removes the attribute) if the
        record exists, its ``version`` is ``expected_version`` (when given) and its
        ``state`` one of ``expected_states`` (when given).

        Args:
            submission_id: the record's ``pk``.
            changes: attribute name -> new value; ``pk``, ``version`` and ``updatedAt``
                are managed by the repository and may not be given.
            expected_version: write only if the stored ``version`` equals this.
            expected_states: write only if the stored ``state`` is one of these.

        Returns:
            The record as stored after the write.

        Raises:
            JobRecordNotFoundError: no record has this id.
            JobRecordConflictError: a condition failed (``current`` holds the record;
                nothing written).
            ValueError: ``changes`` names a managed attribute.
        """
        ...

    def save_job_state_if_version(
        self,
        submission_id: str,
        *,
        facts: Mapping[str, Any],
        summary: Mapping[str, Any],
        expected_version: int,
    ) -> int:
        """Write ``jobStateFacts``/``jobState`` if ``jobStateVersion`` is
        ``expected_version`` (0: never written); returns the new version (also when
        the write's lost answer is recognised as this call's).

        Raises:
            StaleJobStateError: the version moved on (re-read, re-fold, retry).
            JobRecordNotFoundError: no record has this id.
        """
        ...

    def move_disposition_if_status(
        self,
        submission_id: str,
        *,
        expected_status: str | None,
        disposition: Mapping[str, Any],
        successor_id: str | None = None,
        expected_lease: float | None = None,
    ) -> bool:
        """Write ``disposition`` if the recorded one has ``expected_status`` (None = no
        disposition yet) and, with ``expected_lease``, ``leaseUntil`` equal to it
        (absent counts as 0); also append ``successor_id`` to ``successorIds``. False
        when the condition failed (someone else moved first; nothing written); True
        when written, also when the write's lost answer is recognised as this call's."""
        ...

    def mark_submitted_if_job_unset(
        self, submission_id: str, batch_job_id: str, *, batch_job_arn: str | None = None
    ) -> None:
        """State ``SUBMITTED`` with ``batchJobId``/``batchJobArn`` if the record has no
        ``batchJobId`` or this one (a repeat is a no-op).

        Raises:
            JobRecordConflictError: the record names another Batch job.
            JobRecordNotFoundError: no record has this id.
        """
        ...

    def is_foreign(self, batch_job_id: str) -> bool:
        """True when an event of this service job was already recorded as foreign."""
        ...

    def record_foreign(
        self,
        batch_job_id: str,
        *,
        status: str,
        event_time_ms: int,
        job_queue: str | None,
        job_name: str | None,
        quota_share_name: str | None,
        claimed_submission_id: str | None = None,
        finding: str | None = None,
    ) -> None:
        """Note an event of a job quotagov did not submit (unconditional, idempotent);
        ``claimed_submission_id`` and ``finding`` when it carries another submission's
        ``quotagov:submissionId`` tag."""
        ...


class SubmissionQueue(Protocol):
    """The submission queue: carries submission ids from the API to the submit worker."""

    def send(self, submission_id: str) -> None:
        """Queue ``submission_id`` for ``SubmitServiceJob``.

        Raises:
            SubmissionQueueError: the queue did not take the message.
        """
        ...


class SubmissionQueueError(Exception):
    """The submission queue did not accept a message (retry the request later).

    Attributes:
        submission_id: the submission that could not be queued (None when raised by a
            queue adapter, which only knows the message).
    """

    def __init__(self, message: str, submission_id: str | None = None) -> None:
        super().__init__(message)
        self.submission_id = submission_id


class SuccessorSubmitter(Protocol):
    """Sends a successor record to Batch; returns the ``SubmitServiceJob`` response."""

    def __call__(self, successor: JobRecord) -> dict[str, Any]:
        """Submit ``successor`` (its ``clientToken`` included); ``{jobId, jobArn, jobName}``."""
        ...


class StaleJobStateError(Exception):
    """``jobStateVersion`` changed since it was read (another event was folded in first)."""
