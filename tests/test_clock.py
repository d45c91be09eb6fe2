"""ManualClock moves only forward and only when told."""

import pytest

from quotagov.clock import ManualClock


def test_manual_clock_advances_and_refuses_to_go_back() -> None:
    clock = ManualClock(100.0)
    assert clock.advance(5) == 105.0
    clock.set(200)
    assert clock.now() == 200.0
    with pytest.raises(ValueError, match="cannot go back"):
        clock.set(150)
    with pytest.raises(ValueError, match="seconds must be >= 0"):
        clock.advance(-1)
