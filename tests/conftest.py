"""Root fixtures and hooks of the whole suite.

Layout: each directory holds the tests of one part (``audit/``, ``job_state/`` ...)
with a ``conftest.py`` for its own fixtures; what serves several directories is in
the ``support`` package (``tests/support/``, imported as ``support``: ``tests`` is not a
package, so loading this file puts ``tests/`` on ``sys.path``).

Speed tiers: ``make unit-fast`` runs ``-m "not slow"``; ``make unit`` (and so
``make test``, CI) runs everything. A test is ``slow`` when

- it is marked so itself: it runs a subprocess (the demo, the command line), a long
  hypothesis run (``max_examples`` in the hundreds), or takes over about two seconds;
- or it uses one of :data:`SERVER_FIXTURES`, which start a loopback server for it:
  marked here, at collection.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from support.aws import fake_aws_env

# CI (``CI=true``, as ``.ci/run`` is called): hypothesis draws the same examples on every
# run, so a landing never depends on luck; elsewhere each run explores new examples.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")

#: Fixtures (by name, across the suite) that start a loopback server: a moto server
#: (``dynamodb_endpoint``, ``moto_server``, ``endpoint``), the fake Slack Web API
#: (``slack``; stopping it costs half a second a test), the local runtime with its fake
#: Slack (``runtime``), ``quotagov serve`` in a subprocess (``base_url``).
SERVER_FIXTURES = frozenset(
    {"base_url", "dynamodb_endpoint", "endpoint", "moto_server", "runtime", "slack"}
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test that uses a fixture of :data:`SERVER_FIXTURES`."""
    for item in items:
        if SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake AWS credentials in ``eu-west-1`` and no ``AWS_PROFILE`` for the test."""
    fake_aws_env(monkeypatch)
