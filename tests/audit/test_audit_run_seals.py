"""Run seals, written as the attacker: one MAC seals a run of records (an audit queue
batch), and the writer seals only on top of a head it has proven.

The attacker (:class:`audit.tamper_world.Attacker`) holds ``dynamodb:PutItem`` and
``DeleteItem`` on the audit table, knows the record format and the run rule exactly,
and cannot use the KMS keys. Chain here: records 1-10 (one batch, sealed on 10, then
digested), 11-20 (one batch, sealed on 20) and 21-25 (one batch, sealed on 25); 11-25
are not digested yet, so only the seals stand between the attacker and them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from moto import mock_aws

from audit.tamper_world import CHAIN, Attacker, World, decision
from quotagov.governance.audit.chain import ChainWriter, record_hash
from quotagov.governance.audit.decisions import DecisionLog
from quotagov.governance.audit.errors import ChainIntegrityError
from quotagov.governance.audit.seals import first_unsealed, seal_message

SEALED = [10, 20, 25]


@pytest.fixture
def world(aws_credentials: None) -> Iterator[World]:
    with mock_aws():
        built = World()
        assert built.decide_batch(range(1, 11)) == [None] * 10
        [outcome] = built.publisher.publish()
        assert (outcome.status, outcome.head_seq) == ("published", 10)
        assert built.decide_batch(range(11, 21)) == [None] * 10
        assert built.decide_batch(range(21, 26)) == [None] * 5
        yield built


@pytest.fixture
def attacker(world: World) -> Attacker:
    return Attacker(world.dynamodb)


def test_each_batch_is_one_run_sealed_once_and_one_verify_mac_proves_the_chain(
    world: World,
) -> None:
    records = list(world.chains.records(CHAIN))
    verified_before = world.sealer.verified

    report = world.report()

    assert [int(r["seq"]) for r in records] == list(range(1, 26))
    assert [int(r["seq"]) for r in records if "seal" in r] == SEALED
    assert all(records[n - 1]["seal"].startswith("v2:") for n in SEALED)
    # 3 batches, 3 GenerateMac; the writer sealed each on top of its own last head.
    assert world.sealer.generated == 3
    assert report.intact and (report.records, report.digested_to) == (25, 10)
    assert (report.seal_checks, report.sealed_runs) == (1, 3)
    assert world.sealer.verified - verified_before == 1


def test_a_record_inside_an_undigested_sealed_run_edited_and_rehashed(
    world: World, attacker: Attacker
) -> None:
    """Record 14 changed, 14-25 re-linked, re-hashed, markers rewritten, seals kept."""
    forged = {**attacker.record(14), "actor": {"principalArn": "someone-else"}}
    attacker.rehash_from(14, 25, first=forged)

    broken = world.report().first_break

    # Records 1-10 are proven (digest and seal); the first run the seals no longer
    # prove is 11-20. Which of its records changed, one MAC cannot tell.
    assert broken is not None and broken.seq == 11
    assert broken.reason == (
        "not proven: records 11-20 are sealed together by record 20, whose seal does not "
        "verify with the audit key (one of them was changed, inserted, or forged and "
        "re-hashed, or the seal was altered)"
    )


def test_a_record_inside_a_digested_sealed_run_is_named_exactly(
    world: World, attacker: Attacker
) -> None:
    forged = {**attacker.record(4), "action": "SubmissionAccepted"}
    attacker.rehash_from(4, 25, first=forged)

    broken = world.report().first_break

    assert broken is not None and broken.seq == 4
    assert "changed after it was digested" in broken.reason


def test_the_last_record_of_the_last_batch_dropped_with_its_marker(
    world: World, attacker: Attacker
) -> None:
    attacker.delete_record(25)

    broken = world.report().first_break

    assert broken is not None and broken.seq == 21
    assert broken.reason == (
        "not proven: records 21-24 have no seal and no later record's seal covers them "
        "(written without the audit key, or the record that sealed their run was deleted: "
        "the tail was truncated)"
    )


def test_the_last_record_of_a_middle_batch_dropped_with_its_marker(
    world: World, attacker: Attacker
) -> None:
    attacker.delete_record(20)

    broken = world.report().first_break

    assert broken is not None and broken.seq == 20
    assert broken.reason == "missing: the next stored record is 21 (deleted)"


def test_a_batch_cannot_be_resealed_by_moving_or_copying_seals(
    world: World, attacker: Attacker
) -> None:
    """Record 22 changed and 22-25 re-hashed; the attacker then tries every seal they
    hold on the new last record: record 25's own, record 20's, record 10's."""
    forged = {**attacker.record(22), "details": {"reasons": ["nothing to see"]}}
    attacker.rehash_from(22, 25, first=forged)
    tried = []
    for donor in SEALED:
        seal = attacker.record(donor)["seal"]
        attacker.put_record({**attacker.record(25), "seal": seal})
        broken = world.report().first_break
        tried.append((donor, broken.seq if broken else None))

    assert tried == [(10, 21), (20, 21), (25, 21)]
    assert broken is not None and "sealed together by record 25" in broken.reason


def test_a_seal_stripped_to_merge_a_forged_run_into_the_next_one(
    world: World, attacker: Attacker
) -> None:
    """Record 15 changed and 15-25 re-hashed, record 20's seal removed so that 11-25
    look like one run: record 25's seal still covers only the original hashes."""
    forged = {**attacker.record(15), "details": {"reasons": ["rewritten"]}}
    attacker.rehash_from(15, 25, first=forged)
    attacker.put_record({k: v for k, v in attacker.record(20).items() if k != "seal"})

    broken = world.report().first_break

    assert broken is not None and broken.seq == 11
    assert "records 11-25 are sealed together by record 25" in broken.reason


def test_forged_records_appended_after_the_last_run(world: World, attacker: Attacker) -> None:
    last = attacker.record(25)
    prev = last["hash"]
    for seq in (26, 27):
        forged = {
            **{k: v for k, v in last.items() if k != "seal"},
            "seq": seq,
            "prevHash": prev,
            "dedupKey": f"decision:forged-{seq}",
        }
        forged["hash"] = record_hash(forged)
        attacker.put_record(forged)
        prev = forged["hash"]

    broken = world.report().first_break

    assert broken is not None and broken.seq == 26
    assert broken.reason.startswith("not proven: records 26-27 have no seal")


def test_the_writer_will_not_seal_on_top_of_a_replaced_head(
    world: World, attacker: Attacker
) -> None:
    """The laundering attack on a writer that trusts the head: replace the last record
    (re-hashed, marker rewritten) and wait for the next batch, whose seal would then
    vouch for the forgery. On ca25167 the next append sealed it and verify (bisection
    over per-record seals) reported the chain intact. Now a writer that did not seal
    that head itself checks its seal first, and refuses."""
    forged = {**attacker.record(25), "details": {"reasons": ["nothing to see"]}}
    attacker.rehash_from(25, 25, first=forged)
    fresh = DecisionLog(
        ChainWriter(world.chains, sealer=world.sealer), world.versions, world.clock
    )  # another AuditFunction instance: it did not write record 25

    with pytest.raises(ChainIntegrityError, match="the last record 25 has a seal that does not"):
        fresh.record_decision(decision(26))
    failures = world.decide_batch([26, 27])  # the instance that did write record 25

    assert [type(f).__name__ for f in failures] == ["ChainIntegrityError"] * 2
    assert [int(r["seq"]) for r in world.chains.records(CHAIN)][-1] == 25  # nothing added
    broken = world.report().first_break
    assert broken is not None and broken.seq == 21
    assert "records 21-25 are sealed together by record 25" in broken.reason


def test_a_writer_checks_a_head_it_did_not_seal_with_one_verify_mac(world: World) -> None:
    fresh_sealer = world.sealer
    before = (fresh_sealer.generated, fresh_sealer.verified)
    fresh = DecisionLog(ChainWriter(world.chains, sealer=fresh_sealer), world.versions, world.clock)

    fresh.record_decision(decision(26))
    fresh.record_decision(decision(27))  # its own head now: no check

    assert (fresh_sealer.generated - before[0], fresh_sealer.verified - before[1]) == (2, 1)
    assert world.report().intact


def test_a_legacy_chain_of_per_record_v1_seals_still_verifies_and_is_continued(
    world: World, attacker: Attacker
) -> None:
    """Records sealed the ca25167 way (every record, ``MAC(v1 context + hash)``, bare
    base64) verify with the v1 message; the writer continues the chain on a v1 head
    after checking its v1 seal; an edit of a v1 record is still found."""
    for seq in range(1, 26):
        record = {k: v for k, v in attacker.record(seq).items() if k != "seal"}
        record["seal"] = world.sealer.inner.seal(seal_message(str(record["hash"]), version=1))
        attacker.put_record(record)
    assert first_unsealed(list(world.chains.records(CHAIN)), world.sealer).bad_seq is None

    fresh = DecisionLog(ChainWriter(world.chains, sealer=world.sealer), world.versions, world.clock)
    fresh.record_decision(decision(26))
    assert world.report().intact
    assert attacker.record(26)["seal"].startswith("v2:")

    forged = {**attacker.record(18), "details": {"reasons": ["rewritten"]}}
    attacker.rehash_from(18, 26, first=forged)
    broken = world.report().first_break
    assert broken is not None and broken.seq == 18
    assert broken.reason.startswith("seal does not verify with the audit key")
