"""Every bad submission refused clearly, before anything is stored or sent.

Each test is one fault of the issue, with the exact answer, and checks what was left
unchanged (the jobs table, the submission queue, the audit log, Batch).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from quotagov.adapters import sagemaker_model
from support.principals import BOB, assumed_role

from .api import post_jobs
from .conftest import Stack, submission, training_payload
from .sqs_driver import queue_depth

MALLORY = assumed_role("researcher", "mallory")  # in no team of the policy


def _items(stack: Stack) -> list[dict[str, Any]]:
    return list(stack.dynamodb.scan(TableName="quotagov-jobs")["Items"])


def _nothing_changed(stack: Stack) -> None:
    assert _items(stack) == []
    assert queue_depth(stack) == (0, 0)
    assert stack.audit.decisions == []


# -- the training request against botocore's SageMaker model -------------------------


def test_a_64_character_training_job_name_is_400(stack: Stack) -> None:
    name = "a" * 64
    status, reply = post_jobs(submission(serviceRequestPayload=training_payload(name)))
    assert status == 400
    assert reply == {
        "message": "invalid request",
        "faults": [
            {
                "path": "serviceRequestPayload.TrainingJobName",
                "fault": "String should have at most 63 characters",
            }
        ],
    }
    _nothing_changed(stack)


def test_a_63_character_name_with_hyphens_beyond_63_is_refused_by_the_model(stack: Stack) -> None:
    # the schema's pattern alone allows any number of hyphens; the model's max 63 does not
    name = "a" + "-" * 62 + "b"
    status, reply = post_jobs(submission(serviceRequestPayload=training_payload(name)))
    assert status == 400
    assert {
        "path": "serviceRequestPayload.TrainingJobName",
        "fault": ("String should have at most 63 characters"),
    } in reply["faults"]
    _nothing_changed(stack)


def test_max_wait_without_managed_spot_training_is_400(stack: Stack) -> None:
    payload = training_payload(
        StoppingCondition={"MaxRuntimeInSeconds": 3600, "MaxWaitTimeInSeconds": 7200}
    )
    status, reply = post_jobs(submission(serviceRequestPayload=payload))
    assert (status, reply) == (
        400,
        {
            "message": "the training request has 1 fault(s) SageMaker would refuse",
            "faults": [
                {
                    "path": "serviceRequestPayload.StoppingCondition.MaxWaitTimeInSeconds",
                    "fault": "only for managed spot training: set EnableManagedSpotTraining "
                    "to true or leave MaxWaitTimeInSeconds out",
                }
            ],
        },
    )
    _nothing_changed(stack)


def test_max_wait_shorter_than_max_runtime_is_400(stack: Stack) -> None:
    payload = training_payload(
        EnableManagedSpotTraining=True,
        StoppingCondition={"MaxRuntimeInSeconds": 7200, "MaxWaitTimeInSeconds": 3600},
    )
    status, reply = post_jobs(submission(serviceRequestPayload=payload))
    assert status == 400
    assert reply["faults"] == [
        {
            "path": "serviceRequestPayload.StoppingCondition.MaxWaitTimeInSeconds",
            "fault": "3600 s is shorter than MaxRuntimeInSeconds (7200 s); it must be at "
            "least as long",
        }
    ]
    _nothing_changed(stack)


def test_spot_training_without_max_wait_is_400(stack: Stack) -> None:
    payload = training_payload(EnableManagedSpotTraining=True)
    status, reply = post_jobs(submission(serviceRequestPayload=payload))
    assert status == 400
    assert [f["path"] for f in reply["faults"]] == [
        "serviceRequestPayload.StoppingCondition.MaxWaitTimeInSeconds"
    ]
    assert reply["faults"][0]["fault"].startswith("required with EnableManagedSpotTraining")


def test_valid_spot_request_is_accepted(stack: Stack, batch: Any) -> None:
    payload = training_payload(
        EnableManagedSpotTraining=True,
        StoppingCondition={"MaxRuntimeInSeconds": 3600, "MaxWaitTimeInSeconds": 7200},
    )
    status, reply = post_jobs(submission(serviceRequestPayload=payload))
    assert status == 202, reply


def test_instance_count_of_10_to_the_40_is_400_not_502(stack: Stack) -> None:
    payload = training_payload()
    payload["ResourceConfig"]["InstanceCount"] = 10**40
    status, reply = post_jobs(submission(serviceRequestPayload=payload))
    assert status == 400
    assert reply["faults"] == [
        {
            "path": "serviceRequestPayload.ResourceConfig.InstanceCount",
            "fault": f"{10**40} is outside the range -2147483648 to 2147483647",
        }
    ]
    _nothing_changed(stack)


def test_the_model_reports_every_fault_by_path(stack: Stack) -> None:
    payload = training_payload()
    payload["ResourceConfig"]["VolumeSizeInGB"] = "100"
    payload["ResourceConfig"]["KeepAlivePeriodInSeconds"] = 99_999
    payload["AlgorithmSpecification"]["TrainingInputMode"] = "Stream"
    payload["Tags"] = [{"Key": "team"}]
    payload["OutputDataConfig"]["S3OutputPath"] = "ftp://x"
    payload["EnableNetworkIsolation"] = "yes"
    payload["MaxRuntime"] = 5
    status, reply = post_jobs(submission(serviceRequestPayload=payload))
    assert status == 400
    assert reply["faults"] == [
        {
            "path": "serviceRequestPayload.AlgorithmSpecification.TrainingInputMode",
            "fault": "'Stream' is not one of Pipe, File, FastFile",
        },
        {
            "path": "serviceRequestPayload.OutputDataConfig.S3OutputPath",
            "fault": "does not match the pattern (https|s3)://([^/]+)/?(.*)",
        },
        {
            "path": "serviceRequestPayload.ResourceConfig.VolumeSizeInGB",
            "fault": "must be an integer, not a string",
        },
        {
            "path": "serviceRequestPayload.ResourceConfig.KeepAlivePeriodInSeconds",
            "fault": "99999 is above the maximum 21600",
        },
        {"path": "serviceRequestPayload.Tags[0].Value", "fault": "required by CreateTrainingJob"},
        {
            "path": "serviceRequestPayload.EnableNetworkIsolation",
            "fault": "must be true or false, not a string",
        },
        {
            "path": "serviceRequestPayload.MaxRuntime",
            "fault": "not a member of the CreateTrainingJob request",
        },
    ]
    _nothing_changed(stack)


def test_the_extract_matches_the_installed_botocore_model() -> None:
    fresh = sagemaker_model.extract_operation_input()
    extract = resources.files("quotagov.adapters").joinpath(sagemaker_model.EXTRACT_FILE)
    stored = json.loads(extract.read_text("utf-8"))
    assert (stored["root"], stored["shapes"]) == (fresh["root"], fresh["shapes"]), (
        "regenerate with: python -m quotagov.adapters.sagemaker_model"
    )
    assert sagemaker_model.unusable_patterns() == [
        r"([\p{L}\p{Z}\p{N}_.:/=+\-@]*)",
        r"arn:[\p{Alnum}\-]+:lambda:[\p{Alnum}\-]+:[0-9]{12}:function:.*",
    ]


# -- idempotency ------------------------------------------------------------------------


def test_same_key_with_another_instance_count_is_409_naming_key_and_field(
    stack: Stack, batch: Any
) -> None:
    first = submission(clientRequestId="sweep-017-try-1")
    status, accepted = post_jobs(first)
    assert status == 202
    before = _items(stack)
    depth = queue_depth(stack)

    changed = submission(clientRequestId="sweep-017-try-1")
    changed["serviceRequestPayload"]["ResourceConfig"]["InstanceCount"] = 2
    status, reply = post_jobs(changed)

    assert (status, reply) == (
        409,
        {
            "message": "clientRequestId 'sweep-017-try-1' was used for a different request "
            "(serviceRequestPayload.ResourceConfig.InstanceCount differs); use a new "
            "clientRequestId for a new request",
            "clientRequestId": "sweep-017-try-1",
            "field": "serviceRequestPayload.ResourceConfig.InstanceCount",
            "submissionId": accepted["submissionId"],
        },
    )
    assert _items(stack) == before
    assert queue_depth(stack) == depth


def test_same_key_with_another_share_is_409_on_quota_share_name(stack: Stack) -> None:
    assert post_jobs(submission(clientRequestId="k-1"))[0] == 202
    status, reply = post_jobs(submission(clientRequestId="k-1", quotaShareName="medium"))
    assert status == 409
    assert (reply["field"], reply["clientRequestId"]) == ("quotaShareName", "k-1")


def test_same_key_same_request_is_the_first_answer(stack: Stack) -> None:
    status, first = post_jobs(submission(clientRequestId="k-2"))
    assert status == 202
    assert post_jobs(submission(clientRequestId="k-2")) == (202, first)
    assert len(_items(stack)) == 1


def test_same_key_from_another_caller_is_another_submission(stack: Stack) -> None:
    _, alice = post_jobs(submission(clientRequestId="k-3"))
    changed = submission(clientRequestId="k-3", checkpointIntervalSeconds=900)
    status, bob = post_jobs(changed, BOB)
    assert status == 202 and bob["submissionId"] != alice["submissionId"]


# -- one error format --------------------------------------------------------------------


def test_text_plain_is_415_in_the_error_format(stack: Stack) -> None:
    status, reply = post_jobs(
        None, raw=json.dumps(submission()), headers={"Content-Type": "text/plain"}
    )
    assert (status, reply) == (
        415,
        {
            "message": "invalid request",
            "faults": [
                {
                    "path": "headers.Content-Type",
                    "fault": "'text/plain' is not accepted: send the body as application/json",
                }
            ],
        },
    )
    _nothing_changed(stack)


def test_form_encoded_body_is_415_not_an_unknown_field(stack: Stack) -> None:
    form = "team=research&workloadClass=exploratory&priorityLevel=standard"
    status, reply = post_jobs(
        None, raw=form, headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert status == 415
    assert reply["faults"] == [
        {
            "path": "headers.Content-Type",
            "fault": "'application/x-www-form-urlencoded' is not accepted: send the body as "
            "application/json",
        }
    ]
    _nothing_changed(stack)


def test_invalid_json_names_the_body_and_where_not_a_character_offset_as_field(
    stack: Stack,
) -> None:
    status, reply = post_jobs(None, raw='{"team": "research",\n "x": }')
    assert (status, reply) == (
        400,
        {
            "message": "invalid request",
            "faults": [
                {
                    "path": "(body)",
                    "fault": "not valid JSON: Expecting value at line 2 column 7 (character 27)",
                }
            ],
        },
    )


def test_unknown_team_says_so(stack: Stack) -> None:
    status, reply = post_jobs(submission(team="nosuchteam"))
    assert (status, reply) == (
        403,
        {
            "message": "team: no team 'nosuchteam' in the governance policy "
            "(teams: applied, release, research)"
        },
    )
    assert _items(stack) == [] and queue_depth(stack) == (0, 0)
    assert [a.action for a in stack.audit.decisions] == ["SubmissionForbidden"]


def test_not_a_member_still_says_not_a_member(stack: Stack) -> None:
    status, reply = post_jobs(submission(), MALLORY)
    assert status == 403
    assert reply["message"] == (
        f"team: {MALLORY} is not a member of team 'research' and may not submit for it"
    )
