"""Job state from ``Batch Service Job State Change`` events: parse, fold, summarize.

See :mod:`.fold` for the rules (an order-free, idempotent join of every event seen).
"""

from quotagov.governance.job_state.fold import (
    JobTracking,
    ProgressKey,
    fold,
    fold_all,
    join,
    progress_key,
    reconcile_attempts,
)
from quotagov.governance.job_state.state_event import Attempt, StateEvent, UnknownStatusError
from quotagov.governance.job_state.summary import (
    JobStateSummary,
    PreemptionRecord,
    new_preemptions,
    preemption_kind,
    summarize,
)

__all__ = [
    "Attempt",
    "JobStateSummary",
    "JobTracking",
    "PreemptionRecord",
    "ProgressKey",
    "StateEvent",
    "UnknownStatusError",
    "fold",
    "fold_all",
    "join",
    "new_preemptions",
    "preemption_kind",
    "progress_key",
    "reconcile_attempts",
    "summarize",
]
