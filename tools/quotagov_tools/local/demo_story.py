"""The end-to-end demo: the three-share walkthrough replayed through the real API and handlers.

The timeline is the one of ``src/quotagov/examples/aws-walkthrough.json`` (worked by
hand in ``tests/data/scenarios/aws-walkthrough.expected.md``), driven through quotagov
instead of straight into Batch, plus the governance steps the walkthrough does not
have. Virtual time ``t`` is seconds since the demo's start:

======  =====================================================================
t       what the demo does
======  =====================================================================
0       dave (team applied, class ``scheduled``, no checkpoints) asks for the
        background share: refused by the policy, with its reason.
0       alice submits bg-1 and bg-2 (class ``exploratory``, checkpoint every 600 s)
        to the background share: bg-1 runs within quota, bg-2 borrows medium's idle
        instance.
300     frank submits res-1 to the reserved share.
600     dave submits med-1 to the medium share: medium reclaims its instance by
        cross-share preemption of bg-2.
780     alice asks why bg-2 waits (``GET /jobs/{id}``: position, reason, estimated
        start), then to escalate bg-2 to ``high``; the impact preview names bg-1 as
        the in-share victim and its unsaved work; a forged Slack click gets 401.
900     erin (an approver of team research) clicks Approve in Slack (signed request):
        the preview is recomputed, bg-1's unsaved work grew from 180 s to 300 s, so
        nothing is applied and the message asks to confirm; her second click applies
        ``UpdateServiceJob``: bg-2 at 50, which preempts bg-1 in-share.
1800    med-1 ends; bg-1 borrows medium's instance again.
2000    (beyond the walkthrough) dave submits med-2 while every instance is busy
        (res-1 runs until 2100): medium reclaims its instance from bg-1 again.
        bg-1 has now been preempted twice, one more than its
        ``preemptionRetriesBeforeTermination`` (1) allows: Batch fails it and
        quotagov applies the class's disposition (reclassify into the class's next
        share, medium, as a successor job).
5400    (beyond the walkthrough) grace, a platform admin, raises the reserved share
        to 2 instances; frank runs res-2 and res-3 on it; grace then lowers the
        capacity limit back to 1 while both run. The audit function holds both
        CloudTrail-recorded changes for its settling window (``AUDIT_SETTLE_SECONDS``)
        and then records them in ``eventTime`` order, the second with a high-risk
        finding (``CAPACITY_LIMIT_BELOW_USE``).
end     a signed digest on demand, then ``quotagov audit verify``: every hash chain
        intact, every record covered by a signed digest, seals checked.
======  =====================================================================

After each step the owners' Slack DMs it caused are printed as the owner reads them
(checked against the fake Slack), and at the end they are checked one to one against
the preemptions, plus one each for the refusal, the priority change, the failure and
the reclassification.

Every step is checked against what the API, the fake Slack, the events and the audit
table show; :class:`~quotagov_tools.local.demo_driver.DemoResult` collects the failures.
Nothing is assumed (the readings are :class:`~quotagov_tools.local.demo_driver.DemoDriver`'s).
"""

from __future__ import annotations

import json
from typing import Any

from quotagov.api_times import epoch_seconds
from quotagov_tools.local.demo_driver import DemoDriver, DemoResult, audit_entry
from quotagov_tools.local.stack import ACCOUNT_ID

ALICE = f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/researcher/alice"
DAVE = f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/researcher/dave"
FRANK = f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/release/frank"
GRACE = f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/ml-admins/grace"
APPROVER = "U0ERIN"
REQUESTER_SLACK = "U0ALICE"


class Demo(DemoDriver):
    """Runs the demo timeline on a started :class:`~quotagov_tools.local.runtime.LocalRuntime`.

    Args:
        runtime: the embedded runtime (virtual clock at the walkthrough's epoch).
        echo: called with each story line as it happens (``None``: collect only).
    """

    escalations_seen: list[str]

    def run(self) -> DemoResult:
        """Play the whole timeline; returns the result (``ok`` when every check passed)."""
        self.escalations_seen = []
        steps = [
            self.refused_submission,
            self.background_jobs_borrow,
            self.reserved_job,
            self.medium_reclaims,
            self.escalation,
            self.retries_exhausted,
            self.admin_lowers_reserved,
            self.audit_verifies,
        ]
        for step in steps:
            try:
                step()
                self.tell_owners()
            except Exception as exc:  # a step that breaks must not hide the others' results
                self.check(False, f"{step.__name__} raised {type(exc).__name__}: {exc}")
        self._check_notifications()
        self.result.document = self.document()
        return self.result

    def refused_submission(self) -> None:
        """t=0: a non-checkpointing class asks for the in-share-preemption share."""
        self.say("dave (team applied) submits 'nightly-eval' (class scheduled, no checkpoints)")
        self.say("  asking for quota share 'background', which has in-share preemption")
        response = self.submit(
            DAVE,
            "nightly-eval",
            team="applied",
            workload_class="scheduled",
            share="background",
            run_seconds=1200,
        )
        reasons = self.submissions["nightly-eval"]["reasons"]
        self.check(response.status == 422, f"refusal is HTTP 422 (got {response.status})")
        self.check(self.submissions["nightly-eval"]["state"] == "REFUSED", "state REFUSED")
        self.check(bool(reasons), "the refusal gives a reason")
        for reason in reasons:
            self.say(f"  refused by policy: {reason}")

    def background_jobs_borrow(self) -> None:
        """t=0: bg-1 within quota, bg-2 borrows medium's idle instance."""
        for name in ("bg-1", "bg-2"):
            response = self.submit(
                ALICE,
                name,
                team="research",
                workload_class="exploratory",
                share="background",
                run_seconds=3600,
                checkpoint_interval=600,
            )
            entry = self.submissions[name]
            self.check(response.status == 202, f"{name} accepted with 202 (got {response.status})")
            self.say(
                f"alice submits {name} (exploratory, checkpoint every 600 s): "
                f"HTTP {response.status}, share {(response.json() or {}).get('quotaShareName')}, "
                f"priority {(response.json() or {}).get('schedulingPriority')}, "
                f"preemptionRetriesBeforeTermination "
                f"{(response.json() or {}).get('preemptionRetriesBeforeTermination')}"
            )
            self.check(entry["state"] == "QUEUED", f"{name} QUEUED for the submit worker")
        self.rt.pump()
        for name in ("bg-1", "bg-2"):
            view = self.job(name)
            self.submissions[name]["batchJobId"] = view.get("batchJobId")
            self.check(view.get("state") == "SUBMITTED", f"{name} SUBMITTED to Batch by the worker")
        self.at(1)
        running = self.running()
        self.check(running == ["bg-1", "bg-2"], f"bg-1 and bg-2 RUNNING (running: {running})")
        self.say(
            "the submit worker sent both to Batch (SubmitServiceJob, one clientToken each); "
            "bg-1 runs on background's own instance, bg-2 borrows medium's idle one "
            "(reserved never lends)",
            at=0,
        )

    def reserved_job(self) -> None:
        """t=300: res-1 on the reserved share."""
        self.at(300)
        response = self.submit(
            FRANK,
            "res-1",
            team="release",
            workload_class="release",
            share="reserved",
            run_seconds=1800,
        )
        self.check(response.status == 202, f"res-1 accepted (got {response.status})")
        self.rt.pump()
        self.at(301)
        self.check("res-1" in self.running(), "res-1 RUNNING on its reserved instance")
        self.say(
            "frank submits res-1 to the reserved share: it starts on reserved's instance",
            at=300,
        )

    def medium_reclaims(self) -> None:
        """t=600: med-1 reclaims medium's instance from bg-2 (cross-share preemption)."""
        self.at(600)
        response = self.submit(
            DAVE,
            "med-1",
            team="applied",
            workload_class="scheduled",
            share="medium",
            run_seconds=1200,
        )
        self.check(response.status == 202, f"med-1 accepted (got {response.status})")
        self.rt.pump()
        self.at(601)
        found = [p for p in self.preemptions() if p["jobName"] == "bg-2"]
        self.check(
            bool(found) and found[0]["kind"] == "CROSS_SHARE" and found[0]["forJob"] == "med-1",
            f"bg-2 preempted CROSS_SHARE for med-1 (saw {found})",
        )
        self.check("med-1" in self.running(), "med-1 RUNNING")
        self.say(
            "dave submits med-1 to medium: medium's instance is lent to bg-2, so Batch "
            "preempts bg-2 (CROSS_SHARE) and med-1 starts; bg-2 waits RUNNABLE. (The "
            "submit worker paces SubmitServiceJob to 2 calls/s, so bg-2 started 0.5 s "
            "after bg-1 and was preempted just before its first checkpoint.)",
            at=600,
        )
        self.check_lost_work("bg-2", 600, at=600)

    def escalation(self) -> None:
        """t=780..900: escalation requested, previewed, a forged click, approval, in-share."""
        self.at(780)
        self._why_waiting("bg-2")
        escalation = self._request_escalation()
        self.escalations_seen.append(str(escalation.get("escalationId")))
        message = self._approval_message(escalation)
        if message is None:
            return
        self._forged_click(message)
        self.at(900)
        message = self._approve(message)
        self._check_applied(escalation, message)

    def _why_waiting(self, name: str) -> None:
        """``GET /jobs/{id}`` of a RUNNABLE job: its position, reason and estimated start."""
        view = self.job(name)
        batch = view.get("batch") or {}
        waiting = batch.get("waiting") or {}
        position = waiting.get("position") or {}
        reason = waiting.get("reason") or {}
        start = waiting.get("estimatedStartAt")
        self.check(batch.get("status") == "RUNNABLE", f"{name} is RUNNABLE (got {batch})")
        self.check(
            position.get("queue") is not None and bool(reason.get("code")) and start is not None,
            f"{name}'s view says where it waits, why, and when it may start (got {waiting})",
        )
        entry = {
            "jobName": name,
            "at": self.t,
            "status": batch.get("status"),
            "position": position,
            "reason": reason,
            "estimatedStartAt": start,
            "estimatedStartT": None if start is None else round(epoch_seconds(start) - self.t0),
            "estimate": waiting.get("estimate"),
        }
        self.waiting.append(entry)
        when = (
            "not estimated"
            if start is None
            else f"t={entry['estimatedStartT']} s ({start}) at the latest"
        )
        self.say(
            f"alice asks why {name} waits (GET /jobs/{{id}}): place {position.get('queue')} "
            f"in the queue, {position.get('share')} in its share; {reason.get('code')}: "
            f"{reason.get('text')} Estimated start: {when}"
        )

    def _request_escalation(self) -> dict[str, Any]:
        """t=780: alice asks for 'high' on bg-2; the answer is PENDING with its preview."""
        bg2 = self.submissions["bg-2"]
        response = self.api(
            "POST",
            f"/jobs/{bg2['submissionId']}/escalations",
            principal=ALICE,
            body={"level": "high", "reason": "paper deadline on Friday"},
        )
        escalation: dict[str, Any] = response.json() or {}
        self.check(response.status == 201, f"escalation PENDING with 201 (got {response.status})")
        self.check(escalation.get("status") == "PENDING", "escalation status PENDING")
        preview = escalation.get("preview") or {}
        self.say(
            f"alice asks to raise bg-2 to 'high' ({escalation.get('requestedPriority')}): "
            f"escalation {escalation.get('escalationId')} PENDING approval"
        )
        victims = ", ".join(
            f"{v.get('jobName')} ({v.get('kind')}, {v.get('unsavedSeconds'):g} s unsaved)"
            for v in preview.get("preempted") or []
        )
        self.say(f"  impact preview: {preview.get('outcome')}; would preempt: {victims or 'none'}")
        if preview.get("summary"):
            self.say(f"  preview summary: {preview['summary']}")
        self.check("bg-1" in json.dumps(preview), "the preview names bg-1 as the job to preempt")
        return escalation

    def _approval_message(self, escalation: dict[str, Any]) -> Any:
        """The approval request the escalation answer points to, in Slack (None: failed)."""
        where = escalation.get("message")
        if not self.check(isinstance(where, dict), f"escalation answer: {escalation}"):
            return None
        assert isinstance(where, dict)
        message = self.slack_message(str(where.get("channel")), str(where.get("ts")))
        if not self.check(message is not None, "the approval request is in Slack"):
            return None
        self.say(f"  Slack {message.channel}: {message.text}")
        return message

    def _forged_click(self, message: Any) -> None:
        """A click signed with the wrong secret is refused with 401."""
        forged = self.click(APPROVER, message, "escalation_approve", sign=False)
        self.check(forged.status == 401, f"a forged click gets 401 (got {forged.status})")
        self.say(f"a click signed with the wrong secret is refused: HTTP {forged.status}")

    def _approve(self, message: Any) -> Any:
        """t=900: the approver's signed click. The preview is recomputed before applying:
        bg-1's unsaved work grew from 180 s to 300 s, so the first click applies nothing
        and the message asks to confirm the new numbers; the second click applies.
        Returns the message as Slack now shows it."""
        clicked = self.click(APPROVER, message, "escalation_approve")
        self.check(clicked.status == 200, f"the signed click is accepted (got {clicked.status})")
        self.rt.pump()
        message = self.slack_message(message.channel, message.ts)
        escalation_id = self.escalations_seen[-1] if self.escalations_seen else ""
        stored = self.rt.stored_escalation(escalation_id)
        fresh = stored.get("preview") or {}
        shown = stored.get("previousPreview") or {}
        self.check(
            stored.get("status") == "PENDING" and bool(shown),
            f"the first Approve asks to confirm the new preview (got {stored.get('status')})",
        )
        self.say(
            f"{APPROVER} (approver, not the requester) clicks Approve: HTTP {clicked.status}; "
            "quotagov recomputes the impact preview before applying it",
            at=900,
        )
        victims = ", ".join(
            f"{v.get('jobName')} {v.get('unsavedSeconds'):g} s unsaved"
            for v in fresh.get("preempted") or []
        )
        before = ", ".join(
            f"{v.get('jobName')} {v.get('unsavedSeconds'):g} s"
            for v in shown.get("preempted") or []
        )
        self.say(
            f"  the impact changed since the request (now {victims or 'nobody'}; shown at "
            f"t=780: {before or 'nobody'}): nothing applied, the Slack message shows the new "
            "numbers and asks to confirm",
            at=900,
        )
        clicked = self.click(APPROVER, message, "escalation_approve")
        self.check(clicked.status == 200, f"the confirming click is accepted ({clicked.status})")
        self.rt.pump()
        self.at(901)
        message = self.slack_message(message.channel, message.ts)
        self.say(f"{APPROVER} clicks Approve again, confirming: HTTP {clicked.status}", at=900)
        self.say(f"  Slack message now reads: {message.text}", at=900)
        return message

    def _check_applied(self, escalation: dict[str, Any], message: Any) -> None:
        """The escalation is APPLIED by someone else: bg-2 at 50, bg-1 preempted IN_SHARE."""
        preview = escalation.get("preview") or {}
        stored = self.rt.stored_escalation(str(escalation.get("escalationId")))
        self.escalations.append(
            {
                "escalationId": escalation.get("escalationId"),
                "jobName": "bg-2",
                "requestedLevel": "high",
                "requestedBy": ALICE,
                "status": stored.get("status"),
                "decidedBy": stored.get("decidedBy"),
                "preview": preview,
                "previewAtDecision": stored.get("preview"),
            }
        )
        self.check(
            stored.get("status") == "APPLIED", f"escalation APPLIED (got {stored.get('status')})"
        )
        self.check(
            stored.get("decidedBy") not in (None, REQUESTER_SLACK, ALICE),
            f"decided by someone other than the requester (got {stored.get('decidedBy')})",
        )
        self.check(message.edits >= 1, "the Slack message was updated with the decision")
        view = self.job("bg-2")
        priority = (view.get("batch") or {}).get("schedulingPriority")
        self.check(priority == 50, f"bg-2's schedulingPriority is 50 in Batch (got {priority})")
        found = [p for p in self.preemptions() if p["jobName"] == "bg-1"]
        self.check(
            bool(found) and found[0]["kind"] == "IN_SHARE" and found[0]["forJob"] == "bg-2",
            f"bg-1 preempted IN_SHARE for bg-2 (saw {found})",
        )
        bg2_lost = self.lost_work("bg-2")
        restart = (
            "from the beginning (its one attempt ended before its first checkpoint)"
            if bg2_lost and all(run == lost for run, lost in bg2_lost)
            else "from its last checkpoint"
        )
        self.say(
            "UpdateServiceJob raised bg-2 to 50: background is at its limit with in-share "
            "preemption on, so Batch preempts bg-1 (IN_SHARE) and bg-2 starts again "
            f"{restart}",
            at=900,
        )
        self.check_lost_work("bg-1", 600, at=900)
        confirmed = sum(
            float(v.get("unsavedSeconds") or 0)
            for v in (stored.get("preview") or {}).get("preempted") or []
        )
        lost = sum(work for _, work in self.lost_work("bg-1"))
        self.check(
            confirmed == lost,
            f"the preview confirmed at the click ({confirmed:g} s) is what bg-1 lost ({lost:g} s)",
        )

    def retries_exhausted(self) -> None:
        """t=1800..: bg-1 borrows again, is preempted a second time, fails, is reclassified."""
        self.at(1801)
        self.check("bg-1" in self.running(), "bg-1 borrows medium's instance after med-1 ends")
        self.say("med-1 finishes; bg-1 borrows medium's idle instance again", at=1800)
        self.at(2000)
        response = self.submit(
            DAVE,
            "med-2",
            team="applied",
            workload_class="scheduled",
            share="medium",
            run_seconds=600,
        )
        self.check(response.status == 202, f"med-2 accepted (got {response.status})")
        self.rt.pump()
        self.at(2001)
        found = [p for p in self.preemptions() if p["jobName"] == "bg-1"]
        self.check(len(found) == 2, f"bg-1 preempted twice (saw {found})")
        status = self.batch_status("bg-1")
        self.check(status == "FAILED", f"bg-1 FAILED: preemption retries exhausted (got {status})")
        self.say(
            "dave submits med-2 while all 3 instances are busy: medium reclaims its "
            "instance from bg-1 (CROSS_SHARE). "
            "That is bg-1's second preemption; the exploratory class allows 1 retry, so "
            "Batch fails the job",
            at=2000,
        )
        self.tell_owners()
        self._check_reclassified()

    def _check_reclassified(self) -> None:
        """bg-1's record: a successor job, the class's reclassify disposition applied."""
        view = self.job("bg-1")
        successors = (view.get("chain") or {}).get("successorIds") or []
        disposition = view.get("disposition") or {}
        facts = view.get("jobState") or {}
        self.check(bool(successors), f"bg-1 has a successor job (chain: {view.get('chain')})")
        self.check(
            disposition.get("policyAction") == "reclassify"
            and disposition.get("status") == "applied",
            f"the reclassify disposition is applied (got {disposition})",
        )
        entry = {
            "jobName": "bg-1",
            "trigger": disposition.get("trigger"),
            "action": disposition.get("policyAction"),
            "status": disposition.get("status"),
            "decidedBy": disposition.get("decidedBy"),
            "owner": disposition.get("owner"),
            "targetShare": disposition.get("targetShare"),
            "successorId": disposition.get("successorId"),
            "successorBatchJobId": disposition.get("successorBatchJobId"),
            "reason": disposition.get("reason"),
            "preemptionCount": facts.get("preemptionCount"),
            "lostWorkSeconds": sum(
                int(p.get("lostWorkSeconds") or 0) for p in facts.get("preemptions") or []
            ),
        }
        self.dispositions.append(entry)
        self.say(f"  quotagov's disposition: {entry['reason']}")
        self.say(
            f"  bg-1 is reclassified into share '{entry['targetShare']}' as successor "
            f"{entry['successorId']} (Batch job {entry['successorBatchJobId']}); "
            f"the two preemptions lost {entry['lostWorkSeconds']} s of work in total"
        )

    def admin_lowers_reserved(self) -> None:
        """t=5400..: the reserved share grows to 2, runs 2 jobs, is lowered to 1."""
        self.at(5400)
        share_arn = f"{self.rt.job_queue}/quota-share/reserved"
        self.rt.admin_batch(
            GRACE,
            "UpdateQuotaShare",
            {
                "quotaShareArn": share_arn,
                "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}],
            },
        )
        self.say("grace (platform admin) raises the reserved share to 2 x ml.g5.xlarge")
        for name in ("res-2", "res-3"):
            response = self.submit(
                FRANK,
                name,
                team="release",
                workload_class="release",
                share="reserved",
                run_seconds=1800,
            )
            self.check(response.status == 202, f"{name} accepted (got {response.status})")
        self.rt.pump()
        self.at(5460)
        running = self.running()
        self.check(
            "res-2" in running and "res-3" in running, f"res-2, res-3 RUNNING (running {running})"
        )
        self.say("frank's res-2 and res-3 both run on the reserved share")
        self.rt.admin_batch(
            GRACE,
            "UpdateQuotaShare",
            {
                "quotaShareArn": share_arn,
                "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
            },
        )
        self.say("grace lowers the reserved share back to 1 instance while both jobs run")
        self.at(5461)
        window = int(float(self.rt.environments["AuditFunction"]["AUDIT_SETTLE_SECONDS"]))
        self.at(5460 + window + 60)
        self.say(
            f"the audit held both CloudTrail records for its {window} s settling window, "
            "then its release schedule wrote them in eventTime order"
        )

    def _check_notifications(self) -> None:
        """One owner DM per preemption, failure, disposition and priority change."""
        notes = self.notifications()
        preempted = [(n["jobName"], n["at"]) for n in notes if n["kind"] == "preempted"]
        seen = [(p["jobName"], p["at"]) for p in self.preemptions()]
        self.check(
            sorted(preempted) == sorted(seen),
            f"one preemption DM per preemption (DMs {preempted}, preemptions {seen})",
        )
        kinds = sorted(n["kind"] for n in notes if n["kind"] != "preempted")
        expected = ["failed", "priority-changed", "reclassified", "refused"]
        self.check(kinds == expected, f"DMs for {expected} (got {kinds})")

    def audit_verifies(self) -> None:
        """The audit trail: records, findings, and ``audit verify``."""
        records = self.rt.audit_records()
        lowered = [
            r for r in records if "CAPACITY_LIMIT_BELOW_USE" in json.dumps(r.get("findings") or [])
        ]
        self.check(
            bool(lowered), "the audit recorded the lowered reserved limit with its risk finding"
        )
        for record in lowered:
            for finding in record.get("findings") or []:
                self.say(
                    f"  audit finding {finding.get('code')} ({finding.get('severity')} risk): "
                    f"{finding.get('message')}"
                )
        for record in records:
            entry = audit_entry(record)
            self.say(
                f"  audit #{entry['seq']} {entry['recordType']} {entry['action']} "
                f"by {entry['actor']}{' (quotagov)' if entry['quotagov'] else ''}"
            )
        published = self.rt.publish_digests(force=True).get("digests", [])
        self.check(
            any(d.get("status") == "published" for d in published),
            "the digest function signed a digest of the chain on demand",
        )
        reports = self.rt.audit_reports()
        verified = bool(reports) and all(r.intact for r in reports)
        self.check(verified, "audit verify: every hash chain intact")
        digested = all((r.digests or 0) > 0 and r.digested_to == r.records for r in reports)
        self.check(
            digested, "audit verify: every record is covered by a signed digest that verifies"
        )
        sealed = all(r.seal_checks is not None for r in reports)
        self.check(sealed, "audit verify: record seals checked with the KMS key")
        state = "every chain intact" if verified else "BROKEN"
        self.say(f"audit verify: {state} ({len(records)} records)")
        for r in reports:
            if r.first_break is not None:
                self.say(f"  BROKEN {r.first_break}")
            self.say(
                f"  chain {r.chain}: {r.digests} signed digests (signatures checked with "
                f"the public key) cover records 1-{r.digested_to}; "
                f"{r.seal_checks} KMS seal check(s) over {r.records} records sealed in "
                f"{r.sealed_runs} runs"
            )
