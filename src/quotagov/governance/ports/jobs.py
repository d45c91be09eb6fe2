"""Job-record ports: the ``JobsTable`` repositories and the submission queue.

- :class:`JobsRepository` and its errors: submission records as :class:`JobRecord`
  (adapter: ``quotagov.adapters.dynamodb_jobs``).
- :class:`JobStateStore` / :class:`JobStateRepository`: the same items as dicts, for
  job-state tracking and dispositions (adapter: ``quotagov.adapters.dynamodb_job_state``).
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
    """:meth:`JobsRepository.create` found a record with the same ``pk``."""


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
    """Storage of :class:`JobRecord` items; every write is conditional.

    Every successful write sets ``updatedAt`` (epoch seconds, from the caller's clock)
    and increments ``version`` by one.
    """

    def create(self, record: JobRecord) -> JobRecord:
        """Store a new record (``version`` becomes 1).

        Raises:
            JobRecordExistsError: a record with ``record.pk`` exists already.
        """
        ...

    def get(self, submission_id: str) -> JobRecord | None:
        """The record of ``submission_id`` (strongly consistent read), or None."""
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

    def update(
        self,
        submission_id: str,
        changes: Mapping[str, Any],
        *,
        expected_version: int | None = None,
        expected_states: Collection[SubmissionState] | None = None,
    ) -> JobRecord:
        """Set the attributes in ``changes`` (a None value removes the attribute).

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
            JobRecordConflictError: a condition failed (``current`` holds the record).
            ValueError: ``changes`` names a managed attribute.
        """
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


class JobStateStore(Protocol):
    """The job-record operations job-state handling and dispositions need.

    Items are the ``JobsTable`` items as dicts (submission fields plus ``jobState``,
    ``jobStateFacts``, ``jobStateVersion``, ``disposition``, ``successorIds``).
    Implemented by :class:`quotagov.adapters.dynamodb_job_state.DynamoDBJobStateStore`.
    """

    def find_submission_id(self, batch_job_id: str) -> str | None:
        """The submission id whose ``batchJobId`` is ``batch_job_id``, or None."""
        ...

    def get(self, submission_id: str) -> dict[str, Any] | None:
        """The item (strongly consistent read), or None."""
        ...

    def transition_disposition(
        self,
        submission_id: str,
        *,
        expected_status: str | None,
        disposition: Mapping[str, Any],
        successor_id: str | None = None,
        expected_lease: float | None = None,
    ) -> bool:
        """Write ``disposition`` if the recorded one has ``expected_status`` (None = no
        disposition yet); also append ``successor_id`` to ``successorIds``. False when the
        condition failed (someone else moved first). With ``expected_lease`` the recorded
        ``leaseUntil`` (absent counts as 0) must equal it too."""
        ...

    def put_successor(self, item: Mapping[str, Any]) -> bool:
        """Create the successor's item unless one with its ``pk`` exists; True if created."""
        ...

    def set_batch_job_id(
        self, submission_id: str, batch_job_id: str, *, batch_job_arn: str | None = None
    ) -> None:
        """Record the Batch job id (and ARN) of a (successor) submission: state SUBMITTED."""
        ...


class SuccessorSubmitter(Protocol):
    """Sends a successor record to Batch; returns the ``SubmitServiceJob`` response."""

    def __call__(self, successor: Mapping[str, Any]) -> dict[str, Any]:
        """Submit ``successor`` (its ``clientToken`` included); ``{jobId, jobArn, jobName}``."""
        ...


class JobStateRepository(JobStateStore, Protocol):
    """:class:`JobStateStore` plus the job-state writes (adapter: DynamoDBJobStateStore)."""

    def save_job_state(
        self,
        submission_id: str,
        *,
        facts: Mapping[str, Any],
        summary: Mapping[str, Any],
        expected_version: int,
    ) -> int:
        """Conditional write of facts and summary; raises a stale-version error."""
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
        """Note an event of a job quotagov did not submit; ``claimed_submission_id`` and
        ``finding`` when it carries another submission's ``quotagov:submissionId`` tag."""
        ...


class StaleJobStateError(Exception):
    """``jobStateVersion`` changed since it was read (another event was folded in first)."""
