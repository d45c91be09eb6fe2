"""A one-line progress bar on stderr (``simulate`` of large scenarios, ``whatif`` runs)."""

from __future__ import annotations

from typing import TextIO


class ProgressBar:
    """A one-line text progress bar redrawn in place on ``stream``."""

    def __init__(
        self,
        stream: TextIO,
        width: int = 40,
        *,
        label: str = "simulating",
        unit: str = "jobs settled",
    ) -> None:
        self.stream = stream
        self.width = width
        self.label = label
        self.unit = unit

    def __call__(self, done: int, total: int) -> None:
        """Draw ``done`` of ``total`` (jobs settled, runs done...)."""
        fraction = done / total if total else 1.0
        filled = round(fraction * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total} {self.unit}")
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        self.stream.write("\n")
        self.stream.flush()
