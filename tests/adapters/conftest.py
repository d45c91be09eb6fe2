"""Fixtures for the Batch adapter tests."""

from __future__ import annotations

import pytest
from simbatch_support import EPOCH

from quotagov.clock import ManualClock


@pytest.fixture
def clock() -> ManualClock:
    """A manual clock at a fixed epoch."""
    return ManualClock(EPOCH)
