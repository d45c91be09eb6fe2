"""Fixtures of the what-if tests (builders: ``support.whatif``)."""

from __future__ import annotations

import pytest

from support.whatif import GPU


@pytest.fixture
def capacity() -> dict[str, int]:
    """Two ml.g5.xlarge."""
    return {GPU: 2}
