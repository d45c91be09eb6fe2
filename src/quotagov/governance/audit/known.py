"""What quotagov last knew: resource configurations and controller decisions, by resource.

Both are kept as versions that are only ever added (never overwritten): a version is
``(namespace, key, at_ms, tag) -> value``. The latest version at or before a time is
the last known value then. Namespaces used:

- ``CONFIG``: configuration of a resource, key = its ARN (quota share, job queue,
  service job, ...). Written from each audited change (the configuration after it) and
  refreshed from ``DescribeQuotaShare`` (tag ``DescribeQuotaShare``).
- ``DECISION``: controller decisions about a resource (key = the decision's resource,
  and the service job id in its details), value ``{decisionId, action, seq}``; used to
  name the decision behind the controller's own Batch calls.

Storage is behind :class:`VersionStore` (adapter: ``quotagov.adapters.dynamodb_known``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quotagov.governance.audit.diff import quota_share_configuration
from quotagov.governance.ports import BatchNotFoundError, BatchPort
from quotagov.governance.ports.audit import VersionStore

CONFIG = "CONFIG"
DECISION = "DECISION"


class LastKnownConfigurations:
    """The last known configuration of each audited resource.

    Args:
        store: where versions live.
        batch: the Batch port, to refresh quota shares with ``DescribeQuotaShare``.
    """

    def __init__(self, store: VersionStore, batch: BatchPort | None = None) -> None:
        self._store = store
        self._batch = batch

    def before(self, resource_arn: str, at_ms: int) -> dict[str, Any] | None:
        """The configuration known just before ``at_ms`` (epoch ms), or None."""
        version = self._store.latest(CONFIG, resource_arn, before_ms=at_ms)
        return None if version is None else version.value

    def remember(
        self, resource_arn: str, at_ms: int, tag: str, configuration: Mapping[str, Any]
    ) -> None:
        """Record ``configuration`` as known from ``at_ms`` on (idempotent per tag)."""
        self._store.put(CONFIG, resource_arn, at_ms, tag, configuration)

    def refresh_quota_share(self, quota_share_arn: str, at_ms: int) -> dict[str, Any] | None:
        """Describe the share now and remember its live configuration; None if it is gone.

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
        self.remember(quota_share_arn, at_ms, "DescribeQuotaShare", configuration)
        return configuration
