"""``quotagov audit verify`` on a live chain: the writer appends and the digest function
publishes while verify reads, and an honest chain is never reported as tampered.

In AWS, verify runs whenever an auditor runs it, while ``AuditFunction`` appends runs
and ``AuditDigestFunction`` publishes every 15 minutes. The wrappers below let the
writer or the digest function act at the worst moment of verify's reads (between two of
them), or hide the end of a run as a ``Query`` may while its transaction commits.
Before this was handled, the first two cases reported "its dedup marker ... holds
None, not this record (replaced or forged)" and "digest ... covers it ... but the table
no longer holds it (deleted)" on untouched chains.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest
from moto import mock_aws

from audit.tamper_world import CHAIN, World
from quotagov.governance.audit.review import ChainReport, DigestSource, verify
from quotagov.governance.ports import StoredDigest


@pytest.fixture
def world(aws_credentials: None) -> Iterator[World]:
    with mock_aws():
        built = World()
        assert built.decide_batch(range(1, 11)) == [None] * 10
        [outcome] = built.publisher.publish()
        assert outcome.status == "published"
        yield built


class Meanwhile:
    """Runs ``action`` once, just before the first call of the wrapped method ``when``."""

    def __init__(self, inner: Any, when: str, action: Callable[[], None]) -> None:
        self._inner = inner
        self._when = when
        self._action: Callable[[], None] | None = action

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._inner, name)
        if name != self._when:
            return method

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if self._action is not None:
                action, self._action = self._action, None
                action()
            return method(*args, **kwargs)

        return wrapped


def _verify(world: World, chains: Any, digests: Any) -> ChainReport:
    [report] = [
        r
        for r in verify(chains, digests=DigestSource(digests, world.checker), sealer=world.sealer)
        if r.chain == CHAIN
    ]
    return report


def _append_and_digest(world: World, numbers: Iterable[int]) -> Callable[[], None]:
    def act() -> None:
        assert world.decide_batch(list(numbers)) == [None] * len(list(numbers))
        [outcome] = world.publisher.publish()
        assert outcome.status == "published"

    return act


def test_a_run_appended_between_the_marker_read_and_the_record_read(world: World) -> None:
    chains = Meanwhile(world.chains, "records", _append_and_digest(world, range(11, 21)))

    report = _verify(world, chains, world.digests)

    assert report.first_break is None and report.intact
    assert report.records == 20  # the new run was read, with its markers read again


def test_a_run_appended_and_digested_while_the_digests_are_listed(world: World) -> None:
    digests = Meanwhile(world.digests, "digests", _append_and_digest(world, range(11, 21)))

    report = _verify(world, world.chains, digests)

    assert report.intact and report.records == 20
    assert (report.digests, report.digested_to) == (2, 20)


class HalfVisible:
    """The first ``records`` read misses the last ``hidden`` records of the chain (a
    ``Query`` during the commit of the transaction that wrote them)."""

    def __init__(self, inner: Any, hidden: int) -> None:
        self._inner = inner
        self._hidden = hidden
        self.reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def records(self, chain: str, after_seq: int = 0) -> list[dict[str, Any]]:
        self.reads += 1
        found = list(self._inner.records(chain, after_seq))
        return found[: -self._hidden] if self.reads == 1 else found


def test_a_run_half_visible_to_the_first_read_is_read_again(world: World) -> None:
    assert world.decide_batch(range(11, 21)) == [None] * 10
    chains = HalfVisible(world.chains, hidden=4)  # records 17-20 not yet visible

    report = _verify(world, chains, world.digests)

    assert chains.reads == 2 and report.intact and report.records == 20


def test_records_no_seal_covers_are_still_reported_after_the_second_read(
    world: World,
) -> None:
    """The second read is no loophole: records that stay unsealed are reported."""
    from audit.tamper_world import Attacker

    attacker = Attacker(world.dynamodb)
    assert world.decide_batch(range(11, 21)) == [None] * 10
    attacker.delete_record(20)
    chains = HalfVisible(world.chains, hidden=1)

    report = _verify(world, chains, world.digests)

    assert chains.reads == 2
    assert report.first_break is not None and report.first_break.seq == 11
    assert "records 11-19 have no seal" in report.first_break.reason


def test_digests_listed_before_records_see_only_what_existed(world: World) -> None:
    """A stored digest is never newer than the records read after it."""
    listed: list[list[StoredDigest]] = []

    class Recording:
        def __getattr__(self, name: str) -> Any:
            return getattr(world.digests, name)

        def digests(self, chain: str) -> list[StoredDigest]:
            found = world.digests.digests(chain)
            listed.append(found)
            return found

    report = _verify(world, world.chains, Recording())

    assert report.intact and [len(d) for d in listed] == [1]
