"""A property-based test of the whole controller: hypothesis stateful testing over the
local runtime with faults injected into every outside dependency.

Each example starts a :class:`LocalRuntime` with a :class:`FaultPlan` (seed drawn by
hypothesis), then runs a sequence of steps: submissions by three teams, escalation
requests, Approve/Deny clicks by approvers and non-approvers, Batch state events (they
follow from time moving on the simulated Batch), an administrator's quota share changes
and clock moves. After every step the invariants that hold at any time are checked
(no 5xx but documented 503s, no submission sent to Batch twice, no submission recorded
SUBMITTED without its Batch job, the audit chains intact); at the end the run settles
and every invariant of :mod:`quotagov_tools.local.invariants` must hold.

Derandomized with a fixed budget (two examples of at most eight steps after the
initial submissions and escalation request: one to two minutes on a two-core machine),
so CI runs the same sequences every time.
"""

from __future__ import annotations

import contextlib
import io
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from quotagov.governance.submission.to_batch import SUBMISSION_TAG
from quotagov_tools.local.demo_driver import DemoDriver
from quotagov_tools.local.demo_story import ALICE, DAVE, FRANK, GRACE
from quotagov_tools.local.faults import FaultPlan
from quotagov_tools.local.invariants import _batch_jobs, check_invariants
from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions

pytestmark = pytest.mark.slow

#: (principal, team, workload class, quota share) of the walkthrough's submitters.
SUBMITTERS = [
    (ALICE, "research", "exploratory", "background"),
    (DAVE, "applied", "standard", "medium"),
    (FRANK, "release", "release", "reserved"),
]

#: Slack users who click: an approver of research, a non-approver, the requester.
CLICKERS = ["U0ERIN", "U0CAROL", "U0ALICE"]

SETTLE_SECONDS = 3600 + 600


class Controller(RuleBasedStateMachine):
    """The controller on the local runtime, driven by hypothesis."""

    def __init__(self) -> None:
        super().__init__()
        self.runtime: LocalRuntime | None = None
        self.driver: DemoDriver
        self.plan: FaultPlan
        self.count = 0
        self.sink = io.StringIO()

    @initialize(seed=st.integers(min_value=0, max_value=2**16), rate=st.sampled_from([0.02, 0.05]))
    def start(self, seed: int, rate: float) -> None:
        self.plan = FaultPlan(seed, rate)
        with contextlib.redirect_stdout(self.sink):
            options = RuntimeOptions(extra_env={"POWERTOOLS_LOG_LEVEL": "ERROR"}, faults=self.plan)
            self.runtime = LocalRuntime(options).start()
        self.driver = DemoDriver(self.runtime)
        # two research jobs and an escalation request to start from, so that every
        # example has a card to click and a decision to settle
        for _ in range(2):
            self.submit(SUBMITTERS[0], 3600)
        with contextlib.redirect_stdout(self.sink):
            self.rt.advance(1)
            first = self.driver.submissions["job-1"]
            self.driver.api(
                "POST",
                f"/jobs/{first['submissionId']}/escalations",
                principal=ALICE,
                body={"level": "high", "reason": "paper deadline"},
            )

    @property
    def rt(self) -> LocalRuntime:
        assert self.runtime is not None
        return self.runtime

    # -- steps ------------------------------------------------------------------------

    @rule(who=st.sampled_from(SUBMITTERS), run_seconds=st.sampled_from([600, 1800, 3600]))
    def submit(self, who: tuple[str, str, str, str], run_seconds: int) -> None:
        principal, team, workload_class, share = who
        self.count += 1
        with contextlib.redirect_stdout(self.sink):
            response = self.driver.submit(
                principal,
                f"job-{self.count}",
                team=team,
                workload_class=workload_class,
                share=share,
                run_seconds=run_seconds,
                checkpoint_interval=600 if team == "research" else None,
            )
        assert response.status in (202, 422, 503), response.json()

    @precondition(
        lambda self: any(s["team"] == "research" for s in self.driver.submissions.values())
    )
    @rule(data=st.data(), level=st.sampled_from(["high", "standard"]))
    def escalate(self, data: st.DataObject, level: str) -> None:
        names = sorted(n for n, s in self.driver.submissions.items() if s["team"] == "research")
        name = data.draw(st.sampled_from(names))
        submission = self.driver.submissions[name]
        with contextlib.redirect_stdout(self.sink):
            response = self.driver.api(
                "POST",
                f"/jobs/{submission['submissionId']}/escalations",
                principal=ALICE,
                body={"level": level, "reason": "deadline <soon> & *now*"},
            )
        assert response.status in (201, 202, 404, 409, 422, 503), response.json()

    @precondition(lambda self: self._cards() != [])
    @rule(data=st.data(), user=st.sampled_from(CLICKERS), approve=st.booleans())
    def click(self, data: st.DataObject, user: str, approve: bool) -> None:
        message = data.draw(st.sampled_from(self._cards()))
        action = "escalation_approve" if approve else "escalation_deny"
        with contextlib.redirect_stdout(self.sink):
            response = self.driver.click(user, message, action)
        assert response.status == 200

    @rule(capacity=st.sampled_from([1, 2]))
    def admin_changes_reserved(self, capacity: int) -> None:
        with contextlib.redirect_stdout(self.sink):
            self.rt.admin_batch(
                GRACE,
                "UpdateQuotaShare",
                {
                    "quotaShareArn": f"{self.rt.job_queue}/quota-share/reserved",
                    "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": capacity}],
                },
            )

    @rule(seconds=st.sampled_from([1, 60, 600]))
    def time_passes(self, seconds: int) -> None:
        with contextlib.redirect_stdout(self.sink):
            self.rt.advance(seconds)

    def _cards(self) -> list[Any]:
        """Escalation messages that still show buttons."""
        if self.runtime is None:
            return []
        return [
            m
            for m in self.runtime.slack.messages
            if any(b.get("type") == "actions" for b in m.blocks)
        ]

    # -- invariants after every step --------------------------------------------------

    @invariant()
    def no_5xx_but_503(self) -> None:
        if self.runtime is None:
            return
        for invocation in self.runtime.invocations:
            if invocation.trigger.startswith("api "):
                assert invocation.error is None, (self.plan.seed, invocation.error)
                status = int((invocation.result or {}).get("statusCode") or 0)
                assert status < 500 or status == 503, (self.plan.seed, invocation.trigger, status)

    @invariant()
    def each_submission_sent_to_batch_at_most_once(self) -> None:
        if self.runtime is None:
            return
        tags = Counter(
            str((job.get("tags") or {}).get(SUBMISSION_TAG)) for job in _batch_jobs(self.rt)
        )
        twice = {pk: n for pk, n in tags.items() if n > 1}
        assert not twice, (self.plan.seed, twice)

    @invariant()
    def audit_chains_intact(self) -> None:
        if self.runtime is None:
            return
        with contextlib.redirect_stdout(self.sink):
            reports = self.rt.audit_reports()
        assert all(report.intact for report in reports), (self.plan.seed, reports)

    def teardown(self) -> None:
        if self.runtime is None:
            return
        try:
            with contextlib.redirect_stdout(self.sink):
                self.rt.advance(SETTLE_SECONDS)
                broken = [i for i in check_invariants(self.rt) if not i.holds]
            assert not broken, (self.plan.seed, self.plan.summary(), broken[0])
        finally:
            with contextlib.redirect_stdout(self.sink):
                self.rt.stop()


Controller.TestCase.settings = settings(
    max_examples=2,
    stateful_step_count=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
test_controller_under_faults = Controller.TestCase
