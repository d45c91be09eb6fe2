"""The preemption search: cross-share reclaim, in-share preemption, victim order.

Modules (each rule in one place, after Kueue's ``pkg/scheduler/preemption``):

- :mod:`.victims`: victim order and the "no more than needed, or none" keep-back;
- :mod:`.cross_share`: reclaiming borrowed instances for a within-quota job;
- :mod:`.in_share`: preempting lower-priority jobs of the job's own share.

The searches only plan (they return victims); the engine carries the plan out.
"""

from quotagov.scheduler.preemption.cross_share import reclaim_victims
from quotagov.scheduler.preemption.in_share import InSharePlan, in_share_plan
from quotagov.scheduler.preemption.victims import keep_back, victim_order_key

__all__ = ["InSharePlan", "in_share_plan", "keep_back", "reclaim_victims", "victim_order_key"]
