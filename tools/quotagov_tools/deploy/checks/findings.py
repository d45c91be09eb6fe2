"""What every rule reports: :class:`Finding` (an empty list means the template passes)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Finding:
    """One broken rule: ``rule`` (handler, event or iam), the resource, and what is wrong."""

    rule: str
    resource: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.resource}: {self.message}"
