"""The escalation functions' metrics: team and share dimensions, through Powertools (EMF)."""

from __future__ import annotations

import pytest

from job_state.lambda_support import emf_metrics

from .world import World

REASON = "Camera-ready deadline on Friday; bg-2 produces the final ablation."


def test_request_decision_and_expiry_each_emit_their_metric(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    status, body = world.request("sub-bg-2", "high", REASON)
    assert status == 201
    assert world.click(body["escalationId"], "U0CAROL") == 200
    world.expire()

    metrics = emf_metrics(capsys.readouterr().out)
    share = {"team": "research", "quotaShareName": "background", "service": "quotagov-tests"}
    requested = [(v, d) for n, v, d in metrics if n == "EscalationsRequested"]
    assert requested == [(1.0, {**share, "level": "high", "status": "PENDING"})]
    decided = [(v, d) for n, v, d in metrics if n == "EscalationsDecided"]
    assert decided == [(1.0, {**share, "outcome": "approved"})]
    expired = [(v, d) for n, v, d in metrics if n == "EscalationsExpired"]
    assert expired == [(0.0, {"service": "quotagov-tests"})]


def test_a_refused_click_is_counted_with_its_outcome(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    status, body = world.request("sub-bg-2", "high", REASON)
    assert status == 201
    capsys.readouterr()
    # alice may not approve her own team's request (four-eyes rule): refused, counted
    assert world.click(body["escalationId"], "U0ALICE") == 200

    decided = [d for n, _, d in emf_metrics(capsys.readouterr().out) if n == "EscalationsDecided"]
    assert [d["outcome"] for d in decided] == ["refused"]
    assert decided[0]["team"] == "research"
