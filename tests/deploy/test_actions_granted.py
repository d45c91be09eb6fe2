"""Every Batch and KMS action a function's code calls is granted to its role, and every
one its role holds is called.

The actions are not listed by hand: they are what the code calls when it runs. The
local runtime runs each function as its own role and keeps each AWS call it makes
(:class:`quotagov_tools.local.actions.ActionLog`); here it plays the demo's timeline (every
function, the Slack approval and the apply function's recheck of the impact preview
included), then starts every function cold and makes the audit writer append on top of
a head an earlier instance sealed (``kms:VerifyMac``). The grants are those of the
built template (``.aws-sam/build/template.yaml`` when ``make lint-template`` has run,
else ``template.yaml``): a function's ``Policies`` statements, and for KMS the key
policy statements naming its role (``<Function>Role``).

Both ways:

- each Batch or KMS action a function called is granted to it (for KMS, on the key the
  call named);
- each Batch or KMS action granted to a function was called by it in this run, or is
  in :data:`NOT_DRIVEN_HERE` with the path that uses it; an entry there must still be
  granted and not called, so the table shrinks as the run covers more.

Batch grants are compared by action; which resources a Batch statement may name is the
deploy checker's ``iam`` rule (``Resource: "*"`` only for actions without
resource-level permissions).
"""

from __future__ import annotations

import contextlib
import copy
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from quotagov_tools.deploy.checks import default_template
from quotagov_tools.deploy.template import (
    FUNCTION_TYPE,
    function_role,
    function_statements,
    load_template,
    references,
    resources_of_type,
)
from quotagov_tools.local.actions import ActionCall
from quotagov_tools.local.demo_story import DAVE, Demo
from quotagov_tools.local.runtime import LocalRuntime
from support.runtime import quiet_runtime

pytestmark = pytest.mark.slow  # the whole local runtime plays the demo

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(default_template(ROOT))
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
FUNCTIONS = sorted(resources_of_type(TEMPLATE, FUNCTION_TYPE))
KEYS = sorted(n for n, r in RESOURCES.items() if r.get("Type") == "AWS::KMS::Key")
CHECKED = ("batch", "kms")

#: (function, action) granted for a path this run does not drive -> that path.
NOT_DRIVEN_HERE: dict[tuple[str, str], str] = {
    ("JobsApiFunction", "batch:SubmitServiceJob"): (
        "POST /jobs/{jobId}/disposition submits the successor at once"
    ),
    ("JobsApiFunction", "batch:TagResource"): "SubmitServiceJob with tags (the successor's)",
    ("SubmitWorkerFunction", "batch:TagResource"): "SubmitServiceJob with tags",
    ("JobStateFunction", "batch:TagResource"): "SubmitServiceJob with tags (the successor's)",
    ("JobStateFunction", "batch:TerminateServiceJob"): (
        "the thrash guard terminates a job it moves to another share"
    ),
    ("ApplyDecisionsFunction", "batch:SubmitServiceJob"): (
        "a disposition chosen with a Slack button: the successor"
    ),
    ("ApplyDecisionsFunction", "batch:TagResource"): "SubmitServiceJob with tags",
    ("ReconcilerFunction", "batch:ListServiceJobs"): (
        "a submission QUEUED through every re-queue: is its job in Batch after all?"
    ),
    ("ReconcilerFunction", "batch:DescribeServiceJob"): "the same, by its tag",
    ("ReconcilerFunction", "kms:VerifyMac"): "a stuck QUEUED record's submissionProof",
    ("ReconcilerFunction", "kms:GenerateMac"): "its re-queue and audit messages, sealed",
    ("SubmitWorkerFunction", "kms:GenerateMac"): (
        "a submission it fails: its owner notice and audit record, sealed"
    ),
    ("EscalationExpiryFunction", "kms:GenerateMac"): "an expiry's audit record, sealed",
    ("JobsApiFunction", "kms:VerifyMac"): (
        "POST /jobs/{jobId}/disposition: the stored successor's submissionProof"
    ),
}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _iam_grants(template: dict[str, Any], function: str) -> set[tuple[str, str]]:
    """(action, referenced logical id or ``*``) of the function's Allow statements."""
    pairs: set[tuple[str, str]] = set()
    for statement in function_statements(template, function):
        if not isinstance(statement, dict) or statement.get("Effect") != "Allow":
            continue
        for resource in _list(statement.get("Resource")):
            targets = {"*"} if resource == "*" else set(references(resource)) or {"?"}
            for action in _list(statement.get("Action")):
                pairs.update((action, target) for target in targets)
    return pairs


def _key_policy_grants(template: dict[str, Any], function: str) -> set[tuple[str, str]]:
    """(action, key) that a key policy allows the function's role itself."""
    role = {"Fn::GetAtt": [f"{function}Role", "Arn"]}
    resources = template["Resources"]
    return {
        (action, key)
        for key in KEYS
        for statement in resources[key]["Properties"]["KeyPolicy"]["Statement"]
        if statement["Effect"] == "Allow" and role in _list(statement["Principal"].get("AWS"))
        for action in _list(statement["Action"])
    }


def _grants(template: dict[str, Any], function: str) -> set[tuple[str, str]]:
    return _iam_grants(template, function) | _key_policy_grants(template, function)


def _checked_actions(template: dict[str, Any], function: str) -> set[str]:
    return {a for a, _t in _grants(template, function) if a.split(":", 1)[0] in CHECKED}


def _not_granted(template: dict[str, Any], calls: list[ActionCall]) -> list[tuple[str, ...]]:
    """(function, action, resource) of each call the template does not allow: a KMS
    call needs the action on the key it named, a Batch call the action."""
    return sorted(
        (c.function, c.action, c.resource)
        for c in set(calls)
        if (
            c.action.startswith("kms:")
            and (c.action, c.resource) not in _grants(template, c.function)
        )
        or (
            c.action.startswith("batch:") and c.action not in _checked_actions(template, c.function)
        )
    )


@pytest.fixture(scope="module")
def calls() -> Iterator[list[ActionCall]]:
    """Every Batch and KMS call of the demo, then of a cold audit writer's append."""
    with quiet_runtime() as runtime:
        with contextlib.redirect_stdout(io.StringIO()):
            demo = Demo(runtime, echo=None)
            result = demo.run()
            assert result.ok, result.failures
            runtime.cold_start()
            before = len(runtime.action_log.calls)
            refused = demo.submit(
                DAVE,
                "late-eval",
                team="applied",
                workload_class="scheduled",
                share="background",
                run_seconds=60,
            )
            runtime.pump()
        assert refused.status == 422
        # the audit writer of the new instance vouched for the head before sealing
        after = runtime.action_log.calls[before:]
        assert ActionCall("AuditFunction", "kms:GenerateMac", _seal_key(runtime)) in after
        keys = {_key_id(runtime, key): key for key in KEYS}
        yield [
            ActionCall(c.function, c.action, keys.get(c.resource, c.resource))
            for c in runtime.action_log.calls
            if c.action.split(":", 1)[0] in CHECKED
        ]


def _key_id(runtime: LocalRuntime, key: str) -> str:
    return str(runtime.stack.resolve({"Ref": key}))


def _seal_key(runtime: LocalRuntime) -> str:
    return _key_id(runtime, "AuditSealKey")


def test_a_cold_audit_writer_checks_the_head_another_instance_sealed(
    calls: list[ActionCall],
) -> None:
    assert ActionCall("AuditFunction", "kms:VerifyMac", "AuditSealKey") in calls
    assert ActionCall("AuditFunction", "kms:GenerateMac", "AuditSealKey") in calls


def test_every_batch_and_kms_action_the_code_calls_is_granted(calls: list[ActionCall]) -> None:
    assert _not_granted(TEMPLATE, calls) == []


def test_every_batch_and_kms_action_granted_is_called_or_its_path_named(
    calls: list[ActionCall],
) -> None:
    called = {(c.function, c.action) for c in calls}
    unused = {
        (function, action)
        for function in FUNCTIONS
        for action in _checked_actions(TEMPLATE, function)
        if (function, action) not in called
    }
    assert unused == set(NOT_DRIVEN_HERE)
    assert {c.function for c in calls} <= set(FUNCTIONS)


def test_the_slack_function_holds_and_calls_no_batch_action(calls: list[ActionCall]) -> None:
    slack = {(c.action, c.resource) for c in calls if c.function == "SlackInteractionsFunction"}
    # only the proofs of what it records and hands over (sealed messages, decision proofs)
    assert slack == {("kms:GenerateMac", "MessageKey")}
    held = _checked_actions(TEMPLATE, "SlackInteractionsFunction")
    assert not {a for a in held if a.startswith("batch:")}


def _without(template: dict[str, Any], function: str, sid: str) -> dict[str, Any]:
    """A copy of ``template`` without the statement ``sid`` of ``function``'s policies."""
    broken = copy.deepcopy(template)
    for statements in _statement_lists(broken, function):
        statements[:] = [s for s in statements if s.get("Sid") != sid]
    return broken


def _statement_lists(template: dict[str, Any], function: str) -> list[list[dict[str, Any]]]:
    """The (mutable) statement lists that make up ``function``'s grants."""
    resources = template["Resources"]
    role = function_role(template, function)
    lists = []
    if role in resources:
        for policy in resources[role]["Properties"]["Policies"]:
            lists.append(policy["PolicyDocument"]["Statement"])
    else:
        lists.extend(p["Statement"] for p in resources[function]["Properties"]["Policies"])
    for resource in resources.values():
        if resource.get("Type") == "AWS::IAM::Policy" and {"Ref": role} in resource[
            "Properties"
        ].get("Roles", []):
            lists.append(resource["Properties"]["PolicyDocument"]["Statement"])
    return lists


def test_a_grant_taken_away_is_found(calls: list[ActionCall]) -> None:
    """The comparison finds what a deployed stack would refuse: the writer's check of a
    head another instance sealed, the apply function's recheck of the preview."""
    no_verify = _without(TEMPLATE, "AuditFunction", "CheckHeadSeals")
    assert _not_granted(no_verify, calls) == [("AuditFunction", "kms:VerifyMac", "AuditSealKey")]
    no_snapshot = _without(TEMPLATE, "ApplyDecisionsFunction", "QueueSnapshot")
    refused = [(function, action) for function, action, _ in _not_granted(no_snapshot, calls)]
    assert refused == [("ApplyDecisionsFunction", "batch:GetJobQueueSnapshot")]
    # GenerateMac stays the key policy's alone (no IAM policy may hold it)
    assert ("kms:GenerateMac", "AuditSealKey") in _key_policy_grants(TEMPLATE, "AuditFunction")
    assert ("kms:GenerateMac", "AuditSealKey") not in _iam_grants(TEMPLATE, "AuditFunction")
