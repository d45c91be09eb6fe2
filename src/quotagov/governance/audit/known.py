"""What quotagov last knew: resource configurations and controller decisions, by resource.

Both are kept as versions that are only ever added (never overwritten): a version is
``(namespace, key, at_ms, tag) -> value``. The latest version at or before a time is
the last known value then. Namespaces used:

- ``CONFIG``: configuration of a resource, key = its ARN (quota share, job queue,
  service job, ...). Read from ``DescribeQuotaShare`` after each change of a share
  (tag ``DescribeQuotaShare``) and written from controller decisions (a service job's
  ``schedulingPriority``); a change's before is the last of these with the ``CALL``
  history after it replayed on it.
- ``CALL``: the CloudTrail-recorded successful calls on a resource, key = its ARN,
  ``at_ms`` = the call's ``eventTime``, tag = its ``eventID``, value ``{eventName,
  parameters}``. The store's order (time, then tag) is the resource's ordered history
  by ``(eventTime, eventID)``, whatever order the calls were delivered in.
- ``STAGED`` / ``RELEASED``: CloudTrail calls held for the settling window and the
  release watermark (:mod:`quotagov.governance.audit.trail`).
- ``DECISION``: controller decisions about a resource (key = the decision's resource,
  and the service job id in its details), value ``{decisionId, action, seq}``; used to
  name the decision behind the controller's own Batch calls.

Storage is behind :class:`VersionStore` (adapter: ``quotagov.adapters.dynamodb_known``).
"""

from __future__ import annotations

from typing import Any

from quotagov.governance.audit.diff import quota_share_configuration
from quotagov.governance.ports import BatchNotFoundError, BatchPort
from quotagov.governance.ports.audit import Version, VersionStore

CONFIG = "CONFIG"
CALL = "CALL"
STAGED = "STAGED"
RELEASED = "RELEASED"
DECISION = "DECISION"

#: Tag of the versions read from ``DescribeQuotaShare`` (the live state when read).
REFRESH_TAG = "DescribeQuotaShare"

#: CloudTrail's ``eventTime`` has one-second resolution (CloudTrail record contents).
EVENT_TIME_RESOLUTION_MS = 1000


class LastKnownConfigurations:
    """The last known configuration of each audited resource.

    Args:
        store: where versions live.
        batch: the Batch port, to refresh quota shares with ``DescribeQuotaShare``.
    """

    def __init__(self, store: VersionStore, batch: BatchPort | None = None) -> None:
        self._store = store
        self._batch = batch

    def _latest_change(self, resource_arn: str, before_ms: int, second_ms: int) -> Version | None:
        """The newest version before ``before_ms``, skipping live reads made at or after
        ``second_ms`` (they may already show a later change of that second)."""
        bound: int | None = before_ms
        while bound is not None:
            version = self._store.latest(CONFIG, resource_arn, before_ms=bound)
            if version is None or not (version.tag == REFRESH_TAG and version.at_ms >= second_ms):
                return version
            bound = version.at_ms
        return None  # pragma: no cover - the loop returns

    def before_version(self, resource_arn: str, at_ms: int) -> Version | None:
        """The last known configuration just before a call at ``at_ms`` (epoch ms), as a
        version (its time tells which calls of the ordered history came after it), or None.

        CloudTrail times have one-second resolution, so two changes in the same second
        carry the same time: a ``DescribeQuotaShare`` read made during or after that
        second does not count (it may show this change); the changes of that second
        come from the ``CALL`` history, ordered by event id.
        """
        second = at_ms - at_ms % EVENT_TIME_RESOLUTION_MS
        return self._latest_change(resource_arn, second + EVENT_TIME_RESOLUTION_MS, second)

    def refresh_quota_share(
        self, quota_share_arn: str, at_ms: int, *, after_call_ms: int | None = None
    ) -> dict[str, Any] | None:
        """Describe the share now and remember its live configuration; None if it is gone.

        With ``after_call_ms`` (the time of the call that prompted the read), the version
        is stored no earlier than the end of that call's CloudTrail second: a read made
        within that second may already show a later change of the same second, so it must
        not become the "before" of that change.

        Raises:
            BatchError: for failures other than an unknown share (the port's errors).
        """
        if self._batch is None:
            return None
        try:
            described = self._batch.describe_quota_share(quotaShareArn=quota_share_arn)
        except BatchNotFoundError:
            return None
        configuration = quota_share_configuration(described)
        if after_call_ms is not None:
            second = after_call_ms - after_call_ms % EVENT_TIME_RESOLUTION_MS
            at_ms = max(at_ms, second + EVENT_TIME_RESOLUTION_MS)
        self._store.put(CONFIG, quota_share_arn, at_ms, REFRESH_TAG, configuration)
        return configuration
