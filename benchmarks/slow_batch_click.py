"""How long the Slack click waits when Batch answers in 5 s (a slow Batch, Slack's 3 s).

The embedded runtime (``quotagov_tools.local``) plays the walkthrough up to alice's
escalation; then every call of the simulated Batch sleeps ``--batch-seconds`` (5 s) of
wall time, and the approver's signed click is sent to ``POST /slack/interactions``.
Printed: the seconds until the Slack function answered (Slack's limit is 3 s), the
Batch calls the Slack function made, and the seconds until the message showed the
outcome (with the apply function, after SQS delivered the hand-off).

By default it runs this tree's code. ``--compare DIR`` also runs the ``src/`` of
another checkout in the same run, e.g. the code before the Slack function handed its
decisions to the apply function::

    git worktree add /tmp/base-i15 main
    .venv/bin/python benchmarks/slow_batch_click.py --compare /tmp/base-i15

Each measurement runs in its own subprocess with ``PYTHONPATH`` set to that tree's
``src/`` and that tree's ``template.yaml``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def measure(batch_seconds: float) -> dict[str, Any]:
    """One run in this process (the code on ``sys.path``): the click's answer time."""
    from quotagov_tools.local.demo_story import APPROVER, Demo
    from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions
    from quotagov_tools.local.slack_clicks import block_actions_payload, signed_form

    runtime = LocalRuntime(RuntimeOptions(extra_env={"POWERTOOLS_LOG_LEVEL": "ERROR"})).start()
    try:
        demo = Demo(runtime, echo=None)
        for step in (demo.background_jobs_borrow, demo.reserved_job, demo.medium_reclaims):
            step()
        demo.at(780)
        escalation = demo._request_escalation()
        message = demo._approval_message(escalation)
        inner = runtime.recording_batch._inner
        calls: list[str] = []

        class Slow:
            def __getattr__(self, name: str) -> Any:
                target = getattr(inner, name)
                if not callable(target) or name.startswith("_"):
                    return target

                def slow(*args: Any, **kwargs: Any) -> Any:
                    calls.append(f"{runtime._invoker.current_caller().rsplit('/', 1)[-1]}:{name}")
                    time.sleep(batch_seconds)
                    return target(*args, **kwargs)

                return slow

        runtime.recording_batch._inner = Slow()
        payload = block_actions_payload(
            user=APPROVER,
            message=message.as_dict(),
            action_id="escalation_approve",
            response_url=runtime.slack.response_url_for(message.channel, message.ts),
            action_ts=runtime.clock.now(),
        )
        body, headers = signed_form(payload, runtime.signing_secret, runtime.clock.now())
        started = time.monotonic()
        response = runtime.api(
            "POST", "/slack/interactions", body=body, headers=headers, pump=False
        )
        answered = time.monotonic() - started
        slack_calls = [c for c in calls if c.startswith("SlackInteractionsFunction")]
        runtime.pump()
        shown = time.monotonic() - started
        final = runtime.stored_escalation(escalation["escalationId"])
        return {
            "status": response.status,
            "answeredSeconds": round(answered, 2),
            "slackFunctionBatchCalls": slack_calls,
            "messageUpdatedSeconds": round(shown, 2),
            "escalationStatus": final.get("status"),
            "updateServiceJobCalls": sum(c.endswith(":update_service_job") for c in calls),
        }
    finally:
        runtime.stop()


def run_tree(tree: Path, batch_seconds: float) -> dict[str, Any]:
    """:func:`measure` in a subprocess on ``tree``'s ``src/`` and template."""
    paths = [tree / "src", tree / "tools"]  # the runtime and, once split out, the tools
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in paths if p.is_dir()))
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import slow_batch_click as b; "
        "print(json.dumps(b.measure(float(sys.argv[2]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "benchmarks"), str(batch_seconds)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree}: failed\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch-seconds", type=float, default=5.0)
    parser.add_argument("--compare", type=Path, help="another checkout to measure too")
    args = parser.parse_args()
    trees = [("this tree", ROOT)] + ([("compare", args.compare)] if args.compare else [])
    print(f"Batch answers every call in {args.batch_seconds:g} s; Slack's limit is 3 s")
    for label, tree in trees:
        result = run_tree(tree.resolve(), args.batch_seconds)
        print(
            f"{label:10} ({tree}): click answered in {result['answeredSeconds']:.2f} s "
            f"(HTTP {result['status']}); Slack function's Batch calls: "
            f"{result['slackFunctionBatchCalls'] or 'none'}; message updated after "
            f"{result['messageUpdatedSeconds']:.2f} s; escalation {result['escalationStatus']}; "
            f"UpdateServiceJob calls: {result['updateServiceJobCalls']}"
        )


if __name__ == "__main__":
    main()
