"""Root fixtures of the whole suite.

Layout: each directory holds the tests of one part (``audit/``, ``job_state/`` ...)
with a ``conftest.py`` for its own fixtures; what serves several directories is in
the ``support`` package (``tests/support/``, imported as ``support``: ``tests`` is not a
package, so loading this file puts ``tests/`` on ``sys.path``).

Speed tiers: tests marked ``slow`` (the demo and other subprocesses, loopback servers,
long hypothesis runs, anything over about two seconds) are left out by
``make unit-fast`` (``-m "not slow"``); ``make unit`` and ``make test`` run everything.
"""

from __future__ import annotations

import pytest

from support.aws import fake_aws_env


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake AWS credentials in ``eu-west-1`` and no ``AWS_PROFILE`` for the test."""
    fake_aws_env(monkeypatch)
