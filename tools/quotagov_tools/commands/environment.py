"""Command options that stand for settings, applied for one command and then undone.

A command such as ``quotagov audit verify --public-key key.pem --region eu-west-1`` hands
its options to the wiring the way Lambda hands settings to a function: as environment
variables (:class:`quotagov.settings.Settings`, boto3's ``AWS_REGION``). They must not
outlive the command: ``quotagov_tools.cli.main`` also runs in-process (the tests, a notebook),
and a variable left behind is inherited by everything the process does or starts next.
That was the flaky demo check: a test ran ``audit verify --public-key <another stack's
key>`` in a pytest worker, ``AUDIT_DIGEST_PUBLIC_KEY`` stayed in the worker's
environment, and the ``quotagov demo`` subprocess it started later checked its digests
with that key ("signature does not verify with the digest public key (forged)").
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager


@contextmanager
def options_as_environment(values: Mapping[str, str | None]) -> Iterator[None]:
    """Set each non-empty value of ``values`` (variable -> value) in ``os.environ`` for
    the ``with`` block; afterwards every variable is as it was (unset ones unset again),
    whether the block returned or raised."""
    saved = {name: os.environ.get(name) for name, value in values.items() if value}
    try:
        for name in saved:
            os.environ[name] = str(values[name])
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old
