"""The STRICT_FIFO pass's memo: which heads are known to fail, and which shares to look at.

The pass (:mod:`.cycle`) would reach the same outcome by looking at every share and
trying every head at every event time (``../shared/spec/scenario-format.md``, "Order
of a scheduling pass"); this object keeps what lets it skip that work, and is the one
place that decides when what it knows no longer holds. The property tests compare the
outcome with these shortcuts switched off (``tests/scheduler/test_properties.py``).
BEST_EFFORT_FIFO passes do not use it (:mod:`.sweeps` keeps its own cache).

What it knows (stamps are the ledger's per-type change counters,
:attr:`QuotaLedger.stamp`; the epoch counts configuration and priority changes; none
has a unit):

- *known failing*: a head whose attempt to start failed, with the epoch and its
  instance type's stamp at that time (:meth:`PassMemo.failed`): it is not tried again
  while both are unchanged;
- *active* shares: the ones the next sweep looks at (a dict used as an ordered set);
- *parked* shares: one whose head is known to fail is not looked at until its head's
  type changes stamp or its queue changes (:meth:`PassMemo.park`);
- *settled*: a pass that started nothing is not run again while nothing changed
  (:meth:`PassMemo.is_settled`).

Invalidation, each event in one method: a type's stamp changed
(:meth:`PassMemo.type_changed`, called by the ledger), a share's configuration or a
job's priority changed (:meth:`PassMemo.config_changed`), a job entered or left a
queue (:meth:`PassMemo.enqueue_submitted`, :meth:`PassMemo.enqueue_preempted`,
:meth:`PassMemo.dequeue_terminated`).
"""

from __future__ import annotations

from quotagov.scheduler.queueing import RunnableQueue
from quotagov.scheduler.quota import QuotaLedger, ShareRuntime
from quotagov.scheduler.state import Job

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

    __slots__ = ("_active", "_changes", "_parked", "_settled_at", "_shares", "_stamps", "epoch")

    def __init__(self, ledger: QuotaLedger) -> None:
        #: Changes with every configuration or priority change (the failing-head key).
        self.epoch = 0
        self._stamps = ledger.stamp
        self._shares = ledger.share_list
        self._active: dict[ShareRuntime, None] = dict.fromkeys(ledger.share_list)
        #: Per instance type, the shares waiting on a change of its stamp.
        self._parked: dict[str, list[ShareRuntime]] = {}
        #: Counts every change the memo hears of; ``_settled_at`` its value after the
        #: last pass that ended settled (None: the last pass did not).
        self._changes = 0
        self._settled_at: int | None = None

    # -- invalidation ------------------------------------------------------------------

    def type_changed(self, ledger: QuotaLedger, instance_type: str) -> None:
        """The ledger's stamp of ``instance_type`` changed: wake the shares parked on it."""
        self._changes += 1
        parked = self._parked.pop(instance_type, None)
        if parked:
            for share in parked:
                self._active[share] = None

    def config_changed(self) -> None:
        """A share's configuration or a job's priority changed: nothing known holds."""
        self.epoch += 1
        self._changes += 1
        self._parked.clear()
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
        """The heads worth trying, from the active shares, in share order.

        Each active share's head is its queue's first job. A share with no head leaves
        the sweeps; a head known to fail (:meth:`failed` in this epoch and at its type's
        current stamp) is not tried: it blocks its share, which is parked on its type.
        """
        live: list[Head] = []
        active = self._active
        epoch = self.epoch
        stamps = self._stamps
        for share in list(active):  # a copy: parking deactivates
            queue = share.queue
            if not isinstance(queue, RunnableQueue):
                raise TypeError("a STRICT_FIFO share has a RunnableQueue")
            job = queue.head() if queue.size else None
            if job is None:
                del active[share]
            elif job.failed_epoch == epoch and job.failed_stamp == stamps.get(
                job.instance_type, 0
            ):  # known to fail: same epoch, same stamp of its type
                self.park(share, job.instance_type)
            else:
                live.append((job, share))
        return live

    def failed(self, heads: list[Head]) -> None:
        """These heads were all tried in a sweep that started nothing: each is known to
        fail from now on, and its share is parked on the head's type."""
        epoch = self.epoch
        stamps = self._stamps
        for job, share in heads:
            job.failed_epoch = epoch
            job.failed_stamp = stamps.get(job.instance_type, 0)
            self.park(share, job.instance_type)

    def park(self, share: ShareRuntime, instance_type: str) -> None:
        """The share's head is known to fail until the stamp of ``instance_type`` changes."""
        self._active.pop(share, None)
        self._parked.setdefault(instance_type, []).append(share)
