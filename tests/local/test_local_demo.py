"""``quotagov demo --json`` replays the walkthrough end to end and reports what happened."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from quotagov.api_times import epoch_seconds
from support.principals import ALICE, GRACE

pytestmark = pytest.mark.slow  # runs the whole demo as a subprocess

ROOT = Path(__file__).resolve().parents[2]


def run_demo() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "quotagov_tools.cli", "demo", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # the handlers' output (logs, Powertools warnings) appears only with --logs
    assert done.stderr == ""
    document: dict[str, Any] = json.loads(done.stdout)  # stdout is exactly one JSON document
    return document


def check_every_check_passed(demo: dict[str, Any]) -> None:
    assert demo["failures"] == []
    assert any("audit verify: every chain intact" in line for line in demo["story"])
    records = demo["audit"]["records"]
    assert any(
        f"signed digests (signatures checked with the public key) cover records 1-{records};"
        in line
        for line in demo["story"]
    )


def check_refused_submission_has_its_reason(demo: dict[str, Any]) -> None:
    refused = [s for s in demo["submissions"] if s["state"] == "REFUSED"]
    assert [s["jobName"] for s in refused] == ["nightly-eval"]
    assert refused[0]["httpStatus"] == 422
    assert any("background" in reason and "scheduled" in reason for reason in refused[0]["reasons"])
    accepted = {s["jobName"] for s in demo["submissions"] if s["state"] == "QUEUED"}
    assert accepted == {"bg-1", "bg-2", "res-1", "med-1", "med-2", "res-2", "res-3"}


def check_preemptions_are_the_walkthroughs_and_the_second_of_bg1(demo: dict[str, Any]) -> None:
    assert demo["preemptions"][:3] == [
        {"jobName": "bg-2", "kind": "CROSS_SHARE", "forJob": "med-1", "at": 600},
        {"jobName": "bg-1", "kind": "IN_SHARE", "forJob": "bg-2", "at": 900},
        {"jobName": "bg-1", "kind": "CROSS_SHARE", "forJob": "med-2", "at": 2000},
    ]


def check_escalation_applied_by_an_approver_other_than_the_requester(demo: dict[str, Any]) -> None:
    (escalation,) = demo["escalations"]
    assert escalation["jobName"] == "bg-2"
    assert escalation["status"] == "APPLIED"
    assert escalation["requestedBy"] == ALICE
    assert escalation["decidedBy"] == "U0ERIN"
    victims = escalation["preview"]["preempted"]
    assert [(v["jobName"], v["kind"]) for v in victims] == [("bg-1", "IN_SHARE")]
    assert victims[0]["unsavedSeconds"] == 180.0  # at t=780, last checkpoint at 600


def check_retries_exhausted_job_is_reclassified(demo: dict[str, Any]) -> None:
    (disposition,) = demo["dispositions"]
    assert disposition["jobName"] == "bg-1"
    assert disposition["action"] == "reclassify"
    assert disposition["status"] == "applied"
    assert disposition["trigger"] == "retries-exhausted"
    assert disposition["targetShare"] == "medium"
    assert disposition["successorBatchJobId"]
    assert disposition["preemptionCount"] == 2
    assert disposition["lostWorkSeconds"] == 500  # 300 s at t=900, 200 s at t=2000


def check_audit_records_the_lowered_reserved_limit_and_verifies(demo: dict[str, Any]) -> None:
    audit = demo["audit"]
    assert audit["chainVerified"] is True
    lowered = [f for f in audit["findings"] if f["code"] == "CAPACITY_LIMIT_BELOW_USE"]
    assert len(lowered) == 1
    assert lowered[0]["severity"] == "high"
    assert "reserved" in lowered[0]["message"] and "lowered to 1 from 2" in lowered[0]["message"]
    assert audit["records"] >= 3  # raise, UpdateServiceJob of the approval, lowering


def check_audit_ties_quotagovs_own_batch_call_to_its_decision(demo: dict[str, Any]) -> None:
    entries = demo["audit"]["entries"]
    update = [
        e for e in entries if e["recordType"] == "CloudTrail" and e["action"] == "UpdateServiceJob"
    ]
    assert len(update) == 1
    # the apply function, the only holder of batch:UpdateServiceJob
    assert update[0]["actor"].endswith("ApplyDecisionsFunctionRole/ApplyDecisionsFunction")
    assert update[0]["quotagov"] is True and update[0]["decision"] == "EscalationApproved"
    admin = [e for e in entries if e["action"] == "UpdateQuotaShare"]
    assert [e["actor"] for e in admin] == [GRACE, GRACE]
    assert [e["findings"] for e in admin] == [["POLICY_DRIFT"], ["CAPACITY_LIMIT_BELOW_USE"]]
    decisions = [e["action"] for e in entries if e["recordType"] == "Decision"]
    assert "SubmissionRefused" in decisions and "EscalationApproved" in decisions
    assert "DispositionApplied" in decisions


def check_one_owner_dm_per_preemption_failure_disposition_and_priority_change(
    demo: dict[str, Any],
) -> None:
    notes = demo["notifications"]
    assert all(set(n) >= {"kind", "jobName", "recipient", "text"} for n in notes)
    told = [(n["jobName"], n["at"]) for n in notes if n["kind"] == "preempted"]
    assert sorted(told) == sorted((p["jobName"], p["at"]) for p in demo["preemptions"])
    by_kind = {n["kind"]: n for n in notes if n["kind"] != "preempted"}
    assert sorted(by_kind) == ["failed", "priority-changed", "reclassified", "refused"]
    assert (by_kind["failed"]["jobName"], by_kind["failed"]["recipient"]) == ("bg-1", "U0ALICE")
    assert by_kind["refused"]["recipient"] == "U0DAVE"
    assert "from 10 to 50" in by_kind["priority-changed"]["text"]
    assert "reclassified into share 'medium'" in by_kind["reclassified"]["text"]
    bg2 = next(n for n in notes if n["kind"] == "preempted" and n["jobName"] == "bg-2")
    assert "med-1" in bg2["text"] and "cross-share" in bg2["text"]
    # bg-1's second preemption is folded into the first DM: a digest, not a flood
    assert [
        n["delivery"] for n in notes if n["kind"] == "preempted" and n["jobName"] == "bg-1"
    ] == [
        "posted",
        "digest",
    ]
    for note in notes:  # the story prints them whole, as the owner reads them, indented
        shown = note["text"].replace("\n", "\n" + " " * 8)
        assert any(line.endswith(shown) for line in demo["story"]), shown
    digest = next(n for n in notes if n["delivery"] == "digest")
    assert digest["text"].splitlines()[-1] == "Lost work in all: 500 s."


def check_a_waiting_job_says_where_why_and_when(demo: dict[str, Any]) -> None:
    (waiting,) = demo["waiting"]
    assert (waiting["jobName"], waiting["status"], waiting["at"]) == ("bg-2", "RUNNABLE", 780)
    assert waiting["position"] == {"queue": 1, "share": 1, "queueLength": 1}
    assert waiting["reason"]["code"] == "SHARE_AT_LIMIT"
    assert "background" in waiting["reason"]["text"]
    # med-1 (started at 600, MaxRuntimeInSeconds 1200 + 600) frees medium at 2400 at the
    # latest; bg-1 (cap 4200 s) later: bg-2 borrows medium's instance then.
    assert waiting["estimatedStartT"] == 2400
    # instants are ISO 8601 UTC: the estimate was computed at t=780, for t=2400
    computed = epoch_seconds(waiting["estimate"]["computedAt"])
    assert computed == epoch_seconds(waiting["estimatedStartAt"]) - 2400 + 780


def check_preview_recomputed_at_the_click(demo: dict[str, Any]) -> None:
    (escalation,) = demo["escalations"]
    at_click = escalation["previewAtDecision"]
    assert [v["unsavedSeconds"] for v in at_click["preempted"]] == [300.0]
    at_request = escalation["preview"]["computedAt"]
    assert epoch_seconds(at_click["computedAt"]) - epoch_seconds(at_request) == 120


def test_demo_json_reports_every_step_with_real_values() -> None:
    """One run (the demo takes seconds), every aspect checked by its own helper."""
    demo = run_demo()
    check_every_check_passed(demo)
    check_refused_submission_has_its_reason(demo)
    check_preemptions_are_the_walkthroughs_and_the_second_of_bg1(demo)
    check_escalation_applied_by_an_approver_other_than_the_requester(demo)
    check_retries_exhausted_job_is_reclassified(demo)
    check_audit_records_the_lowered_reserved_limit_and_verifies(demo)
    check_audit_ties_quotagovs_own_batch_call_to_its_decision(demo)
    check_one_owner_dm_per_preemption_failure_disposition_and_priority_change(demo)
    check_a_waiting_job_says_where_why_and_when(demo)
    check_preview_recomputed_at_the_click(demo)
