"""Every port the use cases talk through, grouped by outside system.

Adapters in ``quotagov.adapters`` implement these protocols and raise these errors;
use cases receive objects that satisfy them and never import boto3. Import from the
submodule of the system (``ports.batch``, ``ports.jobs``, ``ports.escalations``,
``ports.audit``, ``ports.chat``) or from this package.
"""

from quotagov.governance.ports.audit import (
    AppendAttempt,
    AppendOutcome,
    AuditSink,
    ChainHead,
    ChainStore,
    ControllerDecision,
    NullAuditSink,
    Version,
    VersionStore,
)
from quotagov.governance.ports.batch import (
    BatchClientError,
    BatchError,
    BatchNotFoundError,
    BatchPort,
    BatchServerError,
    BatchThrottledError,
)
from quotagov.governance.ports.chat import ChatError, ChatNotifier, PostedMessage
from quotagov.governance.ports.escalations import (
    BudgetSpentError,
    EscalationConflictError,
    EscalationRepository,
    GovernedJob,
    GovernedJobs,
    ImpactPreviewer,
    OpenEscalationError,
)
from quotagov.governance.ports.jobs import (
    JobRecordConflictError,
    JobRecordError,
    JobRecordExistsError,
    JobRecordNotFoundError,
    JobsRepository,
    JobStateRepository,
    JobStateStore,
    StaleJobStateError,
    SubmissionQueue,
    SubmissionQueueError,
    SuccessorSubmitter,
)
from quotagov.governance.ports.notifications import (
    DigestConflictError,
    DigestState,
    NotificationEntry,
    NotificationLog,
)

__all__ = [
    "AppendAttempt",
    "AppendOutcome",
    "AuditSink",
    "BatchClientError",
    "BatchError",
    "BatchNotFoundError",
    "BatchPort",
    "BatchServerError",
    "BatchThrottledError",
    "BudgetSpentError",
    "ChainHead",
    "ChainStore",
    "ChatError",
    "ChatNotifier",
    "ControllerDecision",
    "DigestConflictError",
    "DigestState",
    "EscalationConflictError",
    "EscalationRepository",
    "GovernedJob",
    "GovernedJobs",
    "ImpactPreviewer",
    "JobRecordConflictError",
    "JobRecordError",
    "JobRecordExistsError",
    "JobRecordNotFoundError",
    "JobStateRepository",
    "JobStateStore",
    "JobsRepository",
    "NotificationEntry",
    "NotificationLog",
    "NullAuditSink",
    "OpenEscalationError",
    "PostedMessage",
    "StaleJobStateError",
    "SubmissionQueue",
    "SubmissionQueueError",
    "SuccessorSubmitter",
    "Version",
    "VersionStore",
]
