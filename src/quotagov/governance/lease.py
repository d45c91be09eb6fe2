"""A lease: a claim on unfinished work that lapses, so a crashed worker never blocks it.

Both state machines that call Batch after a conditional write use one: an approved
escalation whose ``UpdateServiceJob`` has not finished (claimed when it moved to
``APPROVED``; stored as ``claimedAt``), and a disposition being applied (stored as
``leaseUntil``). While the lease is held, another run leaves the work alone; once it
has lapsed, the next run may take it over with a conditional write on the lease's
stored value, so two runs never both take it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Lease:
    """Held until ``until`` (epoch seconds); ``until == 0`` is a free (released) lease.

    Build one with :meth:`taken` (a run claims the work now) or :meth:`since` (from a
    stored claim time); compare with :meth:`held` at a time from the injected clock.
    """

    until: float = 0.0

    @classmethod
    def taken(cls, now: float, seconds: float) -> Lease:
        """A lease claimed at ``now`` for ``seconds``."""
        return cls(now + seconds)

    @classmethod
    def since(cls, claimed_at: float | None, seconds: float) -> Lease:
        """The lease of a claim made at ``claimed_at`` for ``seconds`` (None: free)."""
        return cls(0.0) if claimed_at is None else cls(claimed_at + seconds)

    def held(self, now: float) -> bool:
        """True while the lease has not lapsed at ``now``."""
        return now < self.until

    def released(self) -> Lease:
        """The free lease (what a run that gives up the work writes)."""
        return Lease(0.0)
