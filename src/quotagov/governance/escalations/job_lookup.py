"""Adapter of the :class:`~quotagov.governance.ports.GovernedJobs` port over the
:class:`~quotagov.governance.ports.JobsRepository` port (the submission path's job
records), so escalations and the impact preview see only the jobs quotagov governs.

It talks to no AWS service itself: the jobs repository it wraps is the DynamoDB (or
in-memory) adapter the composition root hands it.
"""

from __future__ import annotations

from quotagov.governance.model.job import JobRecord, SubmissionState
from quotagov.governance.ports import JobsRepository
from quotagov.governance.ports.escalations import GovernedJob


class JobRecordLookup:
    """:class:`~quotagov.governance.ports.GovernedJobs` over a :class:`JobsRepository`.

    ``find`` looks the id up as a submission id first, then as a Batch service job id
    (GSI ``byBatchJobId``). Only records in state SUBMITTED (Batch accepted the job)
    count as jobs quotagov governs.

    Args:
        records: the job records (``JOBS_TABLE``).
    """

    def __init__(self, records: JobsRepository) -> None:
        self.records = records

    def find(self, job_id: str) -> GovernedJob | None:
        """The governed job with submission id or Batch job id ``job_id``, or None."""
        record = self.records.get(job_id) or self.records.get_by_batch_job_id(job_id)
        return governed_job(record)

    def find_by_batch_job_id(self, batch_job_id: str) -> GovernedJob | None:
        """The governed job with Batch service job id ``batch_job_id``, or None."""
        return governed_job(self.records.get_by_batch_job_id(batch_job_id))

    def record_priority(self, job_id: str, level: str, priority: int) -> None:
        """Set the record's ``priorityLevel`` and ``schedulingPriority`` (0-9999).

        Raises:
            whatever the jobs repository raises (callers log it and go on).
        """
        self.records.update_if_expected(
            job_id, {"priorityLevel": level, "schedulingPriority": priority}
        )


def governed_job(record: JobRecord | None) -> GovernedJob | None:
    """``record`` as a :class:`GovernedJob`; None unless it is SUBMITTED to Batch."""
    if record is None or record.state is not SubmissionState.SUBMITTED:
        return None
    return GovernedJob(
        job_id=record.pk,
        batch_job_id=record.batchJobId,
        job_name=record.jobName,
        team=record.team,
        quota_share_name=record.quotaShareName or "",
        owner=record.principal,
        checkpoint_interval_seconds=record.checkpointIntervalSeconds,
    )
