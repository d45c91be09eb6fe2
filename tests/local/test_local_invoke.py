"""``quotagov invoke FUNCTION --event FILE`` runs every sample event of ``events/``.

Each file ``events/<handler module>[-<variant>].json`` is run through the function
whose template handler is ``quotagov.handlers.<handler module>.handler``, against the
embedded runtime; the handler must return (exit 0) and its result is printed as JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from quotagov.cli import main
from quotagov.deploy.template import load_template
from quotagov.local.stack import Stack

ROOT = Path(__file__).resolve().parents[2]
EVENTS = sorted((ROOT / "events").glob("*.json"))
FUNCTIONS = {
    spec.handler: logical_id
    for logical_id, spec in Stack(
        load_template(ROOT / "template.yaml"),
        {"JobQueueArn": "arn:aws:batch:eu-west-1:111122223333:job-queue/q"},
    )
    .functions()
    .items()
}


def function_for(event_file: Path) -> str:
    """The logical id whose handler module names the event file."""
    module = event_file.stem.split("-", 1)[0]
    return FUNCTIONS[f"quotagov.handlers.{module}.handler"]


def test_every_event_file_names_a_function_of_the_template() -> None:
    assert EVENTS, "events/ has sample events"
    for event_file in EVENTS:
        assert function_for(event_file) in FUNCTIONS.values()


@pytest.mark.parametrize("event_file", EVENTS, ids=[e.name for e in EVENTS])
def test_invoke_runs_the_sample_event(
    event_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code = main(["invoke", function_for(event_file), "--event", str(event_file)])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-2000:]
    result = json.loads(captured.out)
    if "statusCode" in result:  # an API Gateway proxy answer: no 5xx for a sample request
        assert result["statusCode"] < 500, result


def test_invoke_cli_exit_codes(tmp_path: Path) -> None:
    """The real command line: unknown function and unreadable event are usage errors (2)."""
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    run = [sys.executable, "-m", "quotagov.cli", "invoke"]
    unknown = subprocess.run(
        [*run, "NoSuchFunction", "--event", str(EVENTS[0])],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert unknown.returncode == 2
    assert "unknown function 'NoSuchFunction'" in unknown.stderr
    assert "JobsApiFunction" in unknown.stderr
    bad = subprocess.run(
        [*run, "JobsApiFunction", "--event", str(broken)], cwd=ROOT, capture_output=True, text=True
    )
    assert bad.returncode == 2
    assert "broken.json" in bad.stderr
