"""The quota-share operations of the simulated Batch: create, update, describe, list, delete.

Rules (AWS Batch User Guide, "AWS Batch service quotas",
https://docs.aws.amazon.com/batch/latest/userguide/service_limits.html; AWS Batch API
Reference, "CreateQuotaShare", "UpdateQuotaShare" and "DeleteQuotaShare",
https://docs.aws.amazon.com/batch/latest/APIReference/API_DeleteQuotaShare.html): at most
:data:`MAX_SHARES_PER_QUEUE` quota shares per job queue; the configuration is checked
with the scheduler's own rules
(:func:`quotagov.scheduler.rules.share_faults`); ``DeleteQuotaShare`` needs a DISABLED
share; a duplicate create answers "Object already exists".

Choices where AWS is silent or vague, documented here once:

- ``DeleteQuotaShare`` terminates the share's unfinished jobs at once, with
  statusReason :data:`~quotagov_tools.simbatch.reasons.SHARE_DELETED_REASON`
  (AWS: "eventually"; the text AWS does not document).
- Quota shares must be created before the first job is submitted to their queue
  (the engine takes its shares when it is built); a deleted share can be created
  again under the same name.
- Changes apply at once: ``status`` is always ``VALID``, and the
  ``MISCONFIGURATION:...`` reasons of RUNNABLE jobs follow an ``UpdateQuotaShare``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from quotagov.scheduler import InvalidConfigError
from quotagov.scheduler.rules import share_faults
from quotagov_tools.simbatch import arns
from quotagov_tools.simbatch.checks import NAME
from quotagov_tools.simbatch.core import BackendCore, share_config
from quotagov_tools.simbatch.errors import client_error, not_found
from quotagov_tools.simbatch.listing import max_results, offset_page
from quotagov_tools.simbatch.reasons import SHARE_DELETED_REASON, misconfiguration_reason
from quotagov_tools.simbatch.records import JobQueueState, QuotaShareRecord
from quotagov_tools.simbatch.responses import quota_share_detail

#: Quota shares per quota-management job queue (AWS Batch service quotas).
MAX_SHARES_PER_QUEUE = 20


class QuotaShareOperations(BackendCore):
    """The quota-share operations: Create, Update, Describe, List and Delete ``QuotaShare``.

    Each raises :class:`~quotagov.governance.ports.BatchNotFoundError` for an unknown
    job queue or quota share and :class:`~quotagov.governance.ports.BatchClientError`
    (``ClientException``) for a request Batch refuses.
    """

    def create_quota_share(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``CreateQuotaShare``; returns ``{quotaShareName, quotaShareArn}``."""
        op = "CreateQuotaShare"
        queue = self.find_queue(op, request["jobQueue"])
        name = request["quotaShareName"]
        _check_creatable(op, queue, name)
        share = QuotaShareRecord(
            name=name,
            arn=arns.quota_share_arn(queue.arn, name),
            queue_name=queue.name,
            capacity_limits=copy.deepcopy(list(request["capacityLimits"])),
            resource_sharing=dict(request["resourceSharingConfiguration"]),
            preemption=dict(request["preemptionConfiguration"]),
            state=request.get("state", "ENABLED"),
            tags=dict(request.get("tags") or {}),
        )
        _check_share_config(op, share)
        if queue.engine is not None:  # re-creating a deleted share known to the engine
            self._reconfigure_engine_share(op, queue, share)
        queue.shares[name] = share
        return {"quotaShareName": share.name, "quotaShareArn": share.arn}

    def update_quota_share(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``UpdateQuotaShare``: given members replace the old ones (lists replaced whole)."""
        op = "UpdateQuotaShare"
        queue, share = self._find_share(op, request["quotaShareArn"])
        updated = copy.deepcopy(share)
        if "capacityLimits" in request:
            updated.capacity_limits = copy.deepcopy(list(request["capacityLimits"]))
        if "resourceSharingConfiguration" in request:
            updated.resource_sharing = dict(request["resourceSharingConfiguration"])
        if "preemptionConfiguration" in request:
            updated.preemption = dict(request["preemptionConfiguration"])
        if "state" in request:
            updated.state = request["state"]
        _check_share_config(op, updated)
        if queue.engine is not None:
            self._reconfigure_engine_share(op, queue, updated)
        queue.shares[share.name] = updated
        self._refresh_misconfigurations(queue)
        return {"quotaShareName": updated.name, "quotaShareArn": updated.arn}

    def describe_quota_share(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``DescribeQuotaShare``: configuration, state, status (always VALID) and tags."""
        queue, share = self._find_share("DescribeQuotaShare", request["quotaShareArn"])
        return quota_share_detail(share, queue_arn=queue.arn, with_tags=True)

    def list_quota_shares(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``ListQuotaShares``: one page, creation order, ``maxResults`` 1-100."""
        op = "ListQuotaShares"
        queue = self.find_queue(op, request["jobQueue"])
        size = max_results(op, request)
        page, token = offset_page(op, queue.live_shares(), request, size)
        out: dict[str, Any] = {
            "quotaShares": [
                quota_share_detail(s, queue_arn=queue.arn, with_tags=False) for s in page
            ]
        }
        if token is not None:
            out["nextToken"] = token
        return out

    def delete_quota_share(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``DeleteQuotaShare``: the share must be DISABLED; its unfinished jobs are terminated."""
        op = "DeleteQuotaShare"
        queue, share = self._find_share(op, request["quotaShareArn"])
        if share.state != "DISABLED":
            raise client_error(
                op, f"Quota share {share.name} must be DISABLED before it can be deleted."
            )
        for job in self.jobs.values():
            mine = job.queue_name == queue.name and job.quota_share_name == share.name
            if mine and not job.terminal:
                self._terminate(queue, job, SHARE_DELETED_REASON)
        share.deleted = True
        return {}

    # -- helpers ---------------------------------------------------------------------

    def _find_share(self, operation: str, arn: str) -> tuple[JobQueueState, QuotaShareRecord]:
        for queue in self.queues.values():
            for share in queue.shares.values():
                if share.arn == arn and not share.deleted:
                    return queue, share
        raise not_found(operation, f"Quota share {arn} does not exist.")

    def _reconfigure_engine_share(
        self, operation: str, queue: JobQueueState, share: QuotaShareRecord
    ) -> None:
        engine = self._engine(queue)
        try:
            engine.update_share(
                share.name,
                capacityLimits=share.capacity_limits,
                resourceSharingConfiguration=share.resource_sharing,
                preemptionConfiguration=share.preemption,
                state=share.state,
            )
        except InvalidConfigError as exc:
            raise client_error(operation, "; ".join(exc.faults)) from exc

    def _refresh_misconfigurations(self, queue: JobQueueState) -> None:
        """Re-evaluate the MISCONFIGURATION reason of the queue's RUNNABLE jobs."""
        for job in self.jobs.values():
            if job.queue_name != queue.name or job.status != "RUNNABLE":
                continue
            share = queue.shares[job.quota_share_name]
            before = job.misconfiguration
            job.misconfiguration = misconfiguration_reason(queue, share, job.training)
            if job.status_reason == before:
                job.status_reason = job.misconfiguration


def _check_creatable(operation: str, queue: JobQueueState, name: str) -> None:
    """Refuse a ``CreateQuotaShare`` of ``name`` on ``queue`` (a deleted name may come back).

    Raises:
        BatchClientError: a bad name, a live share of that name, the queue already has
            :data:`MAX_SHARES_PER_QUEUE` shares, or (simulator limit) a new name on a
            queue whose engine is built.
    """
    if not NAME.match(name):
        raise client_error(
            operation, f"quotaShareName: {name!r} must be 1-128 letters, digits, - or _"
        )
    existing = queue.shares.get(name)
    if existing is not None and not existing.deleted:
        raise client_error(operation, "Object already exists")
    if len(queue.live_shares()) >= MAX_SHARES_PER_QUEUE:
        raise client_error(
            operation, f"Job queue {queue.name} already has {MAX_SHARES_PER_QUEUE} quota shares"
        )
    if queue.engine is not None and existing is None:
        raise client_error(
            operation,
            "the simulated Batch cannot add a quota share to a job queue that already "
            "has jobs; create the quota shares first",
        )


def _check_share_config(operation: str, share: QuotaShareRecord) -> None:
    faults = share_faults(share_config(share), share.name)
    if faults:
        raise client_error(operation, "; ".join(faults))
