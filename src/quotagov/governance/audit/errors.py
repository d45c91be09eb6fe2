"""Every error the audit package raises, in one module (Powertools style: one
``exceptions``/``errors`` module per utility, a base class, one named class per fault).

All derive from :class:`AuditError`, so a caller can catch the audit's own faults in
one ``except``; each also keeps the built-in base it had before (``ValueError`` for bad
input, ``RuntimeError`` for a chain that cannot be written), so existing ``except``
clauses still match.

- :class:`AuditEventError` (``ValueError``): a CloudTrail record that cannot be audited
  (names the field and the fault); not retried.
- :class:`ForeignCallError` (an :class:`AuditEventError`): a call of another account or
  Region than the governed queue's; counted and dropped, never chained.
- :class:`ChainIntegrityError` (``RuntimeError``): the stored chain contradicts itself
  or its head is not sealed by the audit key, so the writer will not chain onto it
  (run ``quotagov audit verify``).
- :class:`ChainContentionError` (``RuntimeError``): the chain head kept moving; no slot
  won after the allowed attempts (retry later).
- :class:`MalformedDigestError` (``ValueError``): a stored object is not a digest.

The names stay importable from the modules that raised them first
(:mod:`.cloudtrail_calls`, :mod:`.chain`, :mod:`.digests`, :mod:`.trail`).
"""

from __future__ import annotations


class AuditError(Exception):
    """Base of every audit error; ``str(error)`` is the message for a person."""


class AuditEventError(AuditError, ValueError):
    """The CloudTrail record cannot be audited (names the field and the fault)."""


class ForeignCallError(AuditEventError):
    """The call was made in another account or Region than the governed queue's: it is
    counted and dropped, never put in the queue's chain."""


class ChainIntegrityError(AuditError, RuntimeError):
    """The stored chain contradicts itself (a dedup marker without its record), or its
    head record is not sealed by the audit key: the writer refuses to chain onto a
    record it cannot vouch for (run ``quotagov audit verify``)."""


class ChainContentionError(AuditError, RuntimeError):
    """The chain head kept moving: no slot won after the allowed attempts (retry later)."""


class MalformedDigestError(AuditError, ValueError):
    """A stored object is not a digest (names the key and the fault)."""
