"""Slack's 3-second limit with Batch answering in 5 s.

The embedded runtime plays the walkthrough up to alice's escalation; then every Batch
call of the simulated Batch takes 5 s of wall time. The approver's click (and a double
click, and a denied one on another request) must be answered by the Slack function in
under 3 s; the apply function, reached through the SQS ``ApplyQueue``, calls
``UpdateServiceJob`` exactly once, and the Slack message shows the outcome afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from quotagov_tools.local.demo_story import APPROVER, Demo
from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions
from quotagov_tools.local.slack_clicks import block_actions_payload, signed_form

BATCH_SECONDS = 5.0
SLACK_LIMIT_SECONDS = 3.0


class SlowBatch:
    """Every call of ``batch`` sleeps :data:`BATCH_SECONDS` first; counts the calls."""

    def __init__(self, batch: Any) -> None:
        self._batch = batch
        self.calls: list[tuple[str, str]] = []  # (caller function, operation)
        self.caller: Callable[[], str | None] = lambda: None

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._batch, name)
        if not callable(target) or name.startswith("_"):
            return target

        def slow(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((self.caller() or "", name))
            time.sleep(BATCH_SECONDS)
            return target(*args, **kwargs)

        return slow


@pytest.fixture
def escalated() -> Iterator[tuple[Demo, dict[str, Any], Any]]:
    """The walkthrough at t=780: alice's PENDING escalation of bg-2 and its message."""
    runtime = LocalRuntime(RuntimeOptions(extra_env={"POWERTOOLS_LOG_LEVEL": "WARNING"})).start()
    try:
        demo = Demo(runtime, echo=None)
        for step in (demo.background_jobs_borrow, demo.reserved_job, demo.medium_reclaims):
            step()
        demo.at(780)
        escalation = demo._request_escalation()
        message = demo._approval_message(escalation)
        assert message is not None and demo.result.failures == []
        yield demo, escalation, message
    finally:
        runtime.stop()


def _click(demo: Demo, message: Any, action_id: str) -> tuple[int, float]:
    """POST the signed click without delivering what it set off; (status, seconds)."""
    runtime = demo.rt
    payload = block_actions_payload(
        user=APPROVER,
        message=message.as_dict(),
        action_id=action_id,
        response_url=runtime.slack.response_url_for(message.channel, message.ts),
        action_ts=runtime.clock.now(),
    )
    body, headers = signed_form(payload, runtime.signing_secret, runtime.clock.now())
    started = time.monotonic()
    response = runtime.api("POST", "/slack/interactions", body=body, headers=headers, pump=False)
    return response.status, time.monotonic() - started


@pytest.mark.slow  # Batch sleeps 5 s per call, twice
def test_clicks_are_acknowledged_in_under_3_s_while_batch_takes_5_s(
    escalated: tuple[Demo, dict[str, Any], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    demo, escalation, message = escalated
    runtime = demo.rt
    slow = SlowBatch(runtime.batch)
    slow.caller = runtime._invoker.current_caller  # the function making the call
    # Under the CloudTrail recorder every function's Batch call goes through.
    monkeypatch.setattr(runtime.recording_batch, "_inner", slow)

    first = _click(demo, message, "escalation_approve")
    again = _click(demo, message, "escalation_approve")  # a double click

    assert first[0] == 200 and again[0] == 200
    assert first[1] < SLACK_LIMIT_SECONDS, f"first click answered after {first[1]:.2f} s"
    assert again[1] < SLACK_LIMIT_SECONDS, f"second click answered after {again[1]:.2f} s"
    stored = runtime.stored_escalation(escalation["escalationId"])
    assert stored["status"] == "APPROVED" and stored["decidedBy"] == APPROVER
    assert not any(op == "update_service_job" for _caller, op in slow.calls)

    runtime.pump()  # SQS delivers the hand-off to ApplyDecisionsFunction

    updates = [(c, op) for c, op in slow.calls if op == "update_service_job"]
    assert len(updates) == 1, slow.calls
    assert "ApplyDecisionsFunction" in updates[0][0]
    assert not any("SlackInteractionsFunction" in caller for caller, _op in slow.calls)
    stored = runtime.stored_escalation(escalation["escalationId"])
    assert stored["status"] == "APPLIED"
    shown = demo.slack_message(message.channel, message.ts)
    assert shown is not None and shown.edits >= 1
    assert "approved" in shown.text.lower() or "applied" in shown.text.lower(), shown.text
    assert not any(b.get("type") == "actions" for b in shown.blocks), "buttons still shown"
    # The Slack function has no audit table: its EscalationApproved record travelled on
    # the ApplyQueue and the apply function appended it, once.
    assert "AUDIT_TABLE" not in runtime.environments["SlackInteractionsFunction"]
    actions = [r.get("action") for r in runtime.audit_records()]
    assert actions.count("EscalationApproved") == 1
    assert actions.count("EscalationApplied") == 1
