"""Where the simulated Batch's random identifiers come from (seedable for reproducible runs)."""

from __future__ import annotations

import random
import uuid


class IdFactory:
    """Job ids (UUID4), event ids and training-job suffixes; seeded for reproducible runs.

    Args:
        seed: with a seed every run draws the same identifiers in the same order;
            without one they come from :class:`random.SystemRandom`.
    """

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed) if seed is not None else random.SystemRandom()

    def uuid4(self) -> str:
        """A version-4 UUID string."""
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def hex32(self) -> str:
        """32 lowercase hex digits."""
        return f"{self._rng.getrandbits(128):032x}"
