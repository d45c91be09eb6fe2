"""The local scheduler: a discrete-event simulator of AWS Batch quota-share scheduling.

Pure Python, no AWS imports. Contract: ``docs/simulator/spec.md``.

- :class:`Engine`: the step-by-step API (submit, update priority, update a share,
  terminate, advance the clock, read jobs and shares, fork);
- :func:`load_scenario`, :func:`simulate`: scenario files and the output document.

Modules: :mod:`.models` (inputs), :mod:`.quota` (limit/used/free/idle/borrowed),
:mod:`.admission` (within quota, borrowing, DISABLED shares), :mod:`.queueing`
(queue order, BEST_EFFORT_FIFO), :mod:`.cycle` (the scheduling pass, in phases),
:mod:`.memo` (what the pass may skip, and when that stops holding),
:mod:`.preemption` (cross-share reclaim, in-share, victim order), :mod:`quotagov.batch_semantics`
(checkpoints, restart overhead, retries), :mod:`.engine` (the step API), over
:mod:`.timeline` (clock, events, same-time order), :mod:`.lifecycle` (job
transitions, the pass's actuator), :mod:`.config_updates` (set-up checks,
``UpdateQuotaShare``), :mod:`.views` (snapshots) and :mod:`.errors`; :mod:`.scenario`
(over :mod:`.scenario_models`, the format's pydantic models, :mod:`.scenario_checks`,
its cross-field rules, :mod:`.scenario_faults` and :mod:`.scenario_parts`; the JSON
Schema is :mod:`.scenario_schema`), :mod:`.simulation`, :mod:`.metrics`.
"""

from quotagov.scheduler.engine import Engine
from quotagov.scheduler.errors import (
    DuplicateJobError,
    EngineError,
    InvalidConfigError,
    UnknownJobError,
    UnknownShareError,
)
from quotagov.scheduler.models import (
    CapacityLimit,
    JobSpec,
    Options,
    PreemptionConfiguration,
    ResourceSharingConfiguration,
    ShareConfig,
)
from quotagov.scheduler.scenario import (
    Scenario,
    ScenarioAction,
    ScenarioError,
    load_scenario,
    validate_scenario,
)
from quotagov.scheduler.simulation import build_engine, dump_output, normalize, simulate
from quotagov.scheduler.state import Preemption, Transition
from quotagov.scheduler.streaming import stream_output
from quotagov.scheduler.views import JobView, ShareUsage

__all__ = [
    "CapacityLimit",
    "DuplicateJobError",
    "Engine",
    "EngineError",
    "InvalidConfigError",
    "JobSpec",
    "JobView",
    "Options",
    "Preemption",
    "PreemptionConfiguration",
    "ResourceSharingConfiguration",
    "Scenario",
    "ScenarioAction",
    "ScenarioError",
    "ShareConfig",
    "ShareUsage",
    "Transition",
    "UnknownJobError",
    "UnknownShareError",
    "build_engine",
    "dump_output",
    "load_scenario",
    "normalize",
    "simulate",
    "stream_output",
    "validate_scenario",
]
