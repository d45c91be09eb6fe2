"""Owner notifications: a direct message to a job's owner for every preemption, failure,
disposition, refusal and priority change (``docs/design.md``, "People and operators are told").

- :mod:`.owner_messages`: what each event says (:class:`OwnerEvent` and its builders).
- :mod:`.owner`: :class:`OwnerNotifier`, who tells whom, once per event, with a digest
  for repeated preemptions and the team's opt-out.
"""

from quotagov.governance.notifications.owner import OwnerNotifier
from quotagov.governance.notifications.owner_messages import (
    OwnerEvent,
    disposition_applied,
    failed,
    preempted,
    priority_changed,
    refused,
)
from quotagov.governance.ports.notifications import NotificationKind

__all__ = [
    "NotificationKind",
    "OwnerEvent",
    "OwnerNotifier",
    "disposition_applied",
    "failed",
    "preempted",
    "priority_changed",
    "refused",
]
