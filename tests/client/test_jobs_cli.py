"""``quotagov jobs`` against ``quotagov serve`` (started here on loopback, stopped after).

The researcher's path: submit the example job, list, show, why, escalate, watch; the
attacker's: a non-member gets the API's refusal (exit 1) and nothing of theirs is
stored; ``--as`` is never sent to a host that is not loopback (exit 2).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from quotagov_tools.cli import main
from support.principals import ALICE, assumed_role

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "src/quotagov/examples/job.json"
MALLORY = assumed_role("researcher", "mallory")  # a member of no team

pytestmark = pytest.mark.slow  # a quotagov serve subprocess


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "quotagov_tools.cli", "serve", "--port", "0"],
        cwd=ROOT,
        env={**os.environ, "POWERTOOLS_LOG_LEVEL": "ERROR"},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if "listening on" in line:
                yield line.split("listening on", 1)[1].strip()
                break
        else:
            raise AssertionError("quotagov serve exited before listening")
    finally:
        process.terminate()
        process.wait(timeout=20)


def advance(url: str, seconds: int) -> None:
    request = urllib.request.Request(
        f"{url}/_local/clock",
        data=json.dumps({"advance": seconds}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=120) as answer:
        assert answer.status == 200


def jobs(
    capsys: pytest.CaptureFixture[str], url: str, principal: str, *args: str
) -> tuple[int, str, str]:
    code = main(["jobs", *args, "--api-url", url, "--as", principal])
    out, err = capsys.readouterr()
    return code, out, err


def submit_json(capsys: pytest.CaptureFixture[str], url: str, path: Path) -> dict[str, Any]:
    code, out, err = jobs(
        capsys, url, ALICE, "submit", str(path), "--team", "research", "--class",
        "exploratory", "--level", "standard", "--json",
    )  # fmt: skip
    assert code == 0, err
    answer: dict[str, Any] = json.loads(out)
    return answer


def test_the_researchers_journey(
    url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first = submit_json(capsys, url, EXAMPLE)
    assert first["state"] == "QUEUED"
    assert first["quotaShareName"] == "background"
    assert first["schedulingPriority"] == 10
    # two more: the second borrows medium's idle instance, the third waits (YAML this time)
    import yaml

    body = json.loads(EXAMPLE.read_text())
    as_yaml = tmp_path / "job.yaml"
    as_yaml.write_text(yaml.safe_dump(body["serviceRequestPayload"]))
    second = submit_json(capsys, url, EXAMPLE)
    code, out, err = jobs(
        capsys, url, ALICE, "submit", str(as_yaml), "--team", "research", "--class",
        "exploratory", "--level", "standard", "--checkpoint-interval", "600", "--json",
    )  # fmt: skip
    assert code == 0, err
    third = json.loads(out)
    advance(url, 60)

    code, out, err = jobs(capsys, url, ALICE, "show", first["submissionId"])
    assert code == 0, err
    assert "status:             RUNNING" in out
    assert "quota share:        background" in out
    code, out, _ = jobs(capsys, url, ALICE, "show", first["submissionId"], "--json")
    view = json.loads(out)
    assert (view["submissionId"], view["batch"]["status"]) == (first["submissionId"], "RUNNING")

    code, out, _ = jobs(capsys, url, ALICE, "list", "--team", "research", "--json")
    assert code == 0
    listed = {j["submissionId"] for j in json.loads(out)["jobs"]}
    assert {first["submissionId"], second["submissionId"], third["submissionId"]} <= listed
    code, out, _ = jobs(capsys, url, ALICE, "list", "--team", "research")
    assert out.splitlines()[0].split() == ["SUBMISSION", "NAME", "STATE", "SHARE", "CREATED"]

    code, out, _ = jobs(capsys, url, ALICE, "why", third["submissionId"], "--json")
    assert code == 0
    waiting = json.loads(out)
    assert waiting["status"] == "RUNNABLE"
    assert waiting["reason_code"] in {"SHARE_AT_LIMIT", "BORROW_BLOCKED_BY_RESERVE"}
    assert waiting["reason"]
    code, out, _ = jobs(capsys, url, ALICE, "why", third["submissionId"])
    assert f"({waiting['reason_code']})" in out and "position:" in out

    code, out, err = jobs(
        capsys, url, ALICE, "escalate", third["submissionId"], "--level", "high",
        "--reason", "paper deadline", "--json",
    )  # fmt: skip
    assert code == 0, err
    escalation = json.loads(out)
    assert (escalation["status"], escalation["direct"], escalation["requestedPriority"]) == (
        "PENDING",
        False,
        50,
    )

    advance(url, 4000)  # the example job runs 3600 s
    code, out, err = jobs(capsys, url, ALICE, "watch", first["submissionId"], "--interval", "0")
    assert code == 0, err
    assert out.strip().splitlines()[-1].split()[1:3] == [first["submissionId"], "SUCCEEDED"]


def test_a_non_member_gets_the_apis_refusal_and_nothing_is_stored(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = jobs(
        capsys, url, MALLORY, "submit", str(EXAMPLE), "--team", "research", "--class",
        "exploratory", "--level", "standard", "--json",
    )  # fmt: skip
    assert code == 1
    assert json.loads(out) == {
        "status": 403,
        "message": f"team: {MALLORY} is not a member of team 'research' and may not submit for it",
    }
    assert err.startswith("quotagov jobs: 403: team: ")
    code, _, err = jobs(capsys, url, MALLORY, "list", "--team", "research")
    assert (code, err.split(":")[1].strip()) == (1, "403")
    names = []
    code, out, _ = jobs(capsys, url, ALICE, "list", "--team", "research", "--json")
    for job in json.loads(out)["jobs"]:
        code, shown, _ = jobs(capsys, url, ALICE, "show", job["submissionId"], "--json")
        names.append(json.loads(shown)["principal"])
    assert MALLORY not in names


def test_input_faults_are_printed_by_path(
    url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    body = json.loads(EXAMPLE.read_text())
    body["serviceRequestPayload"]["ResourceConfig"]["InstanceCount"] = 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(body))
    code, _, err = jobs(capsys, url, ALICE, "submit", str(bad))
    assert code == 1
    assert err.splitlines()[0] == "quotagov jobs: 400: invalid request"
    assert "  serviceRequestPayload.ResourceConfig.InstanceCount: " in err
    code, _, err = jobs(capsys, url, ALICE, "show", "no-such-job")
    assert (code, err.strip()) == (1, "quotagov jobs: 404: no submission no-such-job")


def test_as_is_refused_for_a_url_that_is_not_loopback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["jobs", "list", "--team", "research", "--api-url", "https://example.com/v1/",
                 "--as", ALICE])  # fmt: skip
    _, err = capsys.readouterr()
    assert code == 2
    assert "only sent to quotagov serve on loopback, not to 'example.com'" in err
