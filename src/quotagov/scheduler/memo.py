"""The STRICT_FIFO pass's memo: what each head can do, and which shares to look at.

The pass (:mod:`.cycle`) would reach the same outcome by looking at every share and
trying every head at every step in every sweep (``docs/simulator/spec.md``,
"Order of a scheduling pass"); this object keeps what lets it skip that work, and is
the one place that decides when what it knows no longer holds. The property tests
compare the outcome with these shortcuts switched off
(``tests/scheduler/test_properties.py``). BEST_EFFORT_FIFO passes do not use it
(:mod:`.sweeps` keeps its own cache).

What it knows (stamps are the ledger's per-type change counters,
:attr:`QuotaLedger.stamp`; the epoch counts configuration and priority changes; none
has a unit):

- a head's *plan*: the first step by which it can start, or None
  (:meth:`PassMemo.plan`), with the epoch and its instance type's stamp at that time:
  whether a job of type ``u`` can start, and how, depends only on the state of ``u``
  and the configuration, so the plan holds while both are unchanged (a None, while
  nothing released the type, or nothing of the share's can start: :mod:`.quota`);
- *active* shares: the ones the next sweep looks at (a dict used as an ordered set);
- *parked* shares: one whose head cannot start is not looked at until a release of its
  head's type lets one of its jobs of the type start, or its queue changes
  (:meth:`PassMemo.park`); one whose head its own state alone keeps from starting
  (:func:`~.steps.own_state_excludes`: not within quota even after its in-share
  victims, no borrowing within its cap) only until a change of its own use of the type,
  a priority or the configuration (:meth:`PassMemo.plan`, step ``OWN_NONE``);
- *settled*: a pass that started nothing is not run again while nothing changed
  (:meth:`PassMemo.is_settled`).

Invalidation, each event in one method: a type's stamp changed, releasing it or not
(:meth:`PassMemo.type_changed`, called by the ledger), a share's configuration or a
job's priority changed (:meth:`PassMemo.config_changed`), a job entered or left a
queue (:meth:`PassMemo.enqueue_submitted`, :meth:`PassMemo.enqueue_preempted`,
:meth:`PassMemo.dequeue_terminated`).
"""

from __future__ import annotations

from quotagov.scheduler.admission import may_start_any
from quotagov.scheduler.queueing import RunnableQueue
from quotagov.scheduler.quota import QuotaLedger, ShareRuntime
from quotagov.scheduler.state import Job
from quotagov.scheduler.steps import first_step, own_state_excludes, start_bounds
from quotagov.scheduler.sweep_queue import OWN_NONE

#: A share's head as the pass sees it: the job and its share.
Head = tuple[Job, ShareRuntime]


class PassMemo:
    """What the STRICT_FIFO scheduling pass knows it can skip, and when that stops holding.

    Args:
        ledger: the quota ledger whose stamps and shares the memo follows (it must
            call :meth:`type_changed` on every stamp change, see
            :attr:`QuotaLedger.watcher`). The memo keeps no reference to the ledger
            itself, only to its ``stamp`` dict and ``share_list``.
    """

    __slots__ = (
        "_active",
        "_changes",
        "_own_parked",
        "_parked",
        "_released",
        "_settled_at",
        "_shares",
        "_stamps",
        "epoch",
    )

    def __init__(self, ledger: QuotaLedger) -> None:
        #: Changes with every configuration or priority change (the plans' key).
        self.epoch = 0
        self._stamps = ledger.stamp
        self._released = ledger.released
        self._shares = ledger.share_list
        self._active: dict[ShareRuntime, None] = dict.fromkeys(ledger.share_list)
        #: Per instance type, the shares waiting on a change of its stamp.
        self._parked: dict[str, list[ShareRuntime]] = {}
        #: Per instance type, the shares whose head only a change of their own (use,
        #: holdings, a priority, the configuration) can let start.
        self._own_parked: dict[str, dict[ShareRuntime, None]] = {}
        #: Counts every change the memo hears of; ``_settled_at`` its value after the
        #: last pass that ended settled (None: the last pass did not).
        self._changes = 0
        self._settled_at: int | None = None

    # -- invalidation ------------------------------------------------------------------

    def type_changed(
        self,
        ledger: QuotaLedger,
        instance_type: str,
        released: bool,
        owner: ShareRuntime | None,
    ) -> None:
        """The ledger's stamp of ``instance_type`` changed; when it ``released`` the type
        (:attr:`QuotaLedger.released`), wake the shares parked on it where a job of the
        type may start now (:func:`~.admission.may_start_any`), and of those whose
        head's own state alone keeps it from starting, the ``owner`` (all when None)."""
        self._changes += 1
        if released:
            own = self._own_parked.get(instance_type)
            if own:
                if owner is None:
                    for share in own:
                        self._active[share] = None
                    del self._own_parked[instance_type]
                elif owner in own:
                    self._active[owner] = None
                    del own[owner]
        parked = self._parked.get(instance_type) if released else None
        if parked:
            still: list[ShareRuntime] = []
            for share in parked:
                if may_start_any(ledger, share, instance_type):
                    self._active[share] = None
                else:
                    still.append(share)
            if still:
                self._parked[instance_type] = still
            else:
                del self._parked[instance_type]

    def config_changed(self) -> None:
        """A share's configuration or a job's priority changed: nothing known holds."""
        self.epoch += 1
        self._changes += 1
        self._parked.clear()
        self._own_parked.clear()
        for share in self._shares:
            self._active[share] = None

    def enqueue_submitted(self, ledger: QuotaLedger, share: ShareRuntime, job: Job) -> None:
        """Push a newly RUNNABLE ``job`` on its share's queue (outside a pass)."""
        self._changes += 1
        self._active[share] = None
        share.queue.push(job)

    def enqueue_preempted(self, share: ShareRuntime, job: Job) -> None:
        """Push a preempted ``job`` back on its share's queue (in a pass)."""
        self._active[share] = None
        share.queue.push(job)
        self._changes += 1

    def dequeue_terminated(self, share: ShareRuntime, job: Job) -> None:
        """Remove a RUNNABLE ``job`` that is terminated from its share's queue."""
        share.queue.discard(job)
        self._changes += 1
        self._active[share] = None

    # -- skipping whole passes -------------------------------------------------------

    def is_settled(self) -> bool:
        """Whether nothing changed since a pass that started nothing."""
        return self._settled_at == self._changes

    def pass_ran(self, settled: bool) -> None:
        """A pass just ended; ``settled``: running it again now would start nothing."""
        self._settled_at = self._changes if settled else None

    # -- during a pass -----------------------------------------------------------------

    def heads(self) -> list[Head]:
        """The heads of the active shares, in share order (each share's queue's first
        job); a share with no head leaves the sweeps."""
        live: list[Head] = []
        active = self._active
        empty: list[ShareRuntime] = []
        for share in active:
            queue = share.queue
            if not isinstance(queue, RunnableQueue):
                raise TypeError("a STRICT_FIFO share has a RunnableQueue")
            job = queue.head() if queue.size else None
            if job is None:
                empty.append(share)
            else:
                live.append((job, share))
        for share in empty:
            del active[share]
        return live

    def plan(self, ledger: QuotaLedger, share: ShareRuntime, job: Job) -> int | None:
        """The first step by which the head ``job`` of ``share`` can start now
        (:func:`~.steps.first_step`), or None; a None parks the share on the head's
        type (:meth:`park`).

        The answer is kept on the job with the epoch and a stamp of its type: it
        depends only on the state of that type (its limits, use, holdings and their
        priorities) and the configuration, and any change of those changes the epoch or
        the type's ``stamp``; a None holds while the type's ``released`` stamp is
        unchanged, and after that while no job of the share and type can start at all
        (:func:`~.admission.may_start_any`; see :mod:`.quota`).
        """
        u = job.instance_type
        step = job.plan_step
        if job.plan_epoch != self.epoch:
            step = self._replan(ledger, share, job)
        elif step == OWN_NONE:
            # its own state alone kept it from starting: still so unless that changed
            if share.changed_at.get(u, 0) > job.plan_stamp:
                step = self._replan(ledger, share, job)
        elif step is not None:
            if job.plan_stamp != self._stamps.get(u, 0):
                step = self._replan(ledger, share, job)
        elif job.plan_stamp != (released := self._released.get(u, 0)):
            # released since: still none if none of the share's jobs of the type can start
            if may_start_any(ledger, share, u):
                step = self._replan(ledger, share, job)
            else:
                job.plan_stamp = released
        if step == OWN_NONE:
            self._active.pop(share, None)
            self._own_parked.setdefault(u, {})[share] = None
            return None
        if step is None:
            self.park(share, u)
        return step

    def _replan(self, ledger: QuotaLedger, share: ShareRuntime, job: Job) -> int | None:
        """Plan ``job`` afresh: its first step, None, or :data:`OWN_NONE` when its
        share's own state alone rules out every step (:func:`~.steps.own_state_excludes`:
        it holds until :attr:`~.quota.ShareRuntime.changed_at` moves past the stamp)."""
        u = job.instance_type
        step = first_step(ledger, share, job)
        job.plan_epoch = self.epoch
        if step is None:
            bounds = start_bounds(ledger, share, u)
            if bounds is not None and own_state_excludes(bounds, job.count, job.priority):
                job.plan_stamp = self._stamps.get(u, 0)
                job.plan_step = OWN_NONE
                return OWN_NONE
        job.plan_stamp = (self._stamps if step is not None else self._released).get(u, 0)
        job.plan_step = step
        return step

    def park(self, share: ShareRuntime, instance_type: str) -> None:
        """The share's head cannot start until a release of ``instance_type`` lets it."""
        self._active.pop(share, None)
        self._parked.setdefault(instance_type, []).append(share)
