"""The escalation functions' metrics: team and share dimensions, through Powertools (EMF)."""

from __future__ import annotations

import pytest

from job_state.lambda_support import emf_metrics
from support.principals import DAVE

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
    assert requested == [
        (1.0, {**share, "requester": "alice", "level": "high", "kind": "approval"})
    ]
    # one metric per request: the old second count of the same event is gone
    assert [n for n, _, _ in metrics if n.startswith("EscalationRequest")] == []
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


def test_a_direct_level_is_counted_once_as_direct(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    """dave raises med-1 to ``standard``, one of team applied's directLevels: handed to
    the apply function (202) and counted once, kind ``direct``."""
    capsys.readouterr()
    status, body = world.request("sub-med-1", "standard", "weekly retrain is late", DAVE)
    assert (status, body["direct"]) == (202, True)
    metrics = emf_metrics(capsys.readouterr().out)
    requested = [(v, d) for n, v, d in metrics if n == "EscalationsRequested"]
    assert requested == [
        (
            1.0,
            {
                "team": "applied",
                "quotaShareName": "medium",
                "service": "quotagov-tests",
                "requester": "dave",
                "level": "standard",
                "kind": "direct",
            },
        )
    ]
