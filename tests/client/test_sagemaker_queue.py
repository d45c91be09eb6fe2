"""``GovernedTrainingQueue`` with the real SageMaker Python SDK (``sagemaker-train``).

The SDK never reaches AWS here: the local runtime runs moto in-process and its loopback
guard refuses every connection outside 127.0.0.1; role validation (IAM policy
simulation) and telemetry are switched off by the SDK's own settings.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sagemaker.train")

from quotagov.client import Client, SubmissionRefusedError
from quotagov.client.sagemaker import GovernedTrainingQueue
from support.principals import ALICE

REGION = "eu-west-1"
ROLE = "arn:aws:iam::111122223333:role/sm-exec-research"
RETRY = {
    "attempts": 2,
    "evaluateOnExit": [
        {
            "action": "RETRY",
            "onStatusReason": "Received status from SageMaker: InternalServerError*",
        },
        {"action": "EXIT", "onStatusReason": "*"},
    ],
}


@pytest.fixture
def sdk_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No role validation, no telemetry, fake credentials (the SDK's own settings)."""
    config = tmp_path / "sagemaker.yaml"
    config.write_text(
        "SchemaVersion: '1.0'\n"
        "SageMaker:\n  PythonSDK:\n    Modules:\n      TelemetryOptOut: true\n"
    )
    monkeypatch.setenv("SAGEMAKER_USER_CONFIG_OVERRIDE", str(config))
    monkeypatch.setenv("SAGEMAKER_VALIDATE_ROLE", "false")
    for name, value in (
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_DEFAULT_REGION", REGION),
    ):
        monkeypatch.setenv(name, value)


def trainer(**changes: Any) -> Any:
    """A researcher's ``ModelTrainer``: one ml.g5.xlarge, checkpoints, a trainer tag."""
    import boto3
    from sagemaker.core.helper.session_helper import Session
    from sagemaker.core.training.configs import (
        CheckpointConfig,
        Compute,
        OutputDataConfig,
        StoppingCondition,
    )
    from sagemaker.train.model_trainer import ModelTrainer

    session = Session(boto_session=boto3.Session(region_name=REGION), default_bucket="research")
    options: dict[str, Any] = {
        "training_image": f"123456789012.dkr.ecr.{REGION}.amazonaws.com/resnet:1",
        "role": ROLE,
        "compute": Compute(instance_type="ml.g5.xlarge", instance_count=1, volume_size_in_gb=50),
        "output_data_config": OutputDataConfig(s3_output_path="s3://research/out/"),
        "checkpoint_config": CheckpointConfig(s3_uri="s3://research/checkpoints/resnet/"),
        "stopping_condition": StoppingCondition(max_runtime_in_seconds=7200),
        "base_job_name": "resnet-sweep",
        "sagemaker_session": session,
        "tags": [{"key": "project", "value": "vision"}],
    }
    options.update(changes)
    return ModelTrainer(**options)


def inputs() -> list[Any]:
    from sagemaker.core.training.configs import InputData

    return [InputData(channel_name="train", data_source="s3://research/train/")]


@pytest.fixture
def served(sdk_env: None) -> Iterator[tuple[Any, str]]:
    """The local runtime behind ``quotagov serve``'s HTTP server on loopback."""
    from quotagov_tools.local.http_server import LocalServer
    from support.runtime import quiet_runtime

    with quiet_runtime() as runtime:
        server = LocalServer(runtime, port=0).start()
        try:
            yield runtime, server.url
        finally:
            server.stop()


def _without_name(request: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request.items() if k != "TrainingJobName"}


@pytest.mark.slow  # the SageMaker SDK's import and a local runtime
def test_the_request_is_the_one_the_sdks_own_training_queue_sends(
    sdk_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The version-pinned fallback (``_create_training_job_args``) checked against the
    SDK's ``TrainingQueue.submit`` with a stubbed Batch client that records its call."""
    from sagemaker.train.aws_batch import batch_api_helper
    from sagemaker.train.aws_batch.training_queue import TrainingQueue

    sent: list[dict[str, Any]] = []

    class RecordingBatch:
        def submit_service_job(self, **request: Any) -> dict[str, str]:
            sent.append(request)
            return {"jobArn": "arn:aws:batch:eu-west-1:111122223333:service-job/1", "jobName": "x"}

    monkeypatch.setattr(batch_api_helper, "get_batch_boto_client", lambda: RecordingBatch())
    for retry, timeout in ((None, None), (RETRY, {"attemptDurationSeconds": 3600})):
        sent.clear()
        TrainingQueue("queue").submit(
            trainer(), inputs(), retry_config=retry, timeout=timeout, tags={"ticket": "GOV-1"}
        )
        built = GovernedTrainingQueue(Client.local("http://127.0.0.1:9", ALICE)).build(
            trainer(), inputs(), retry_config=retry, timeout=timeout, tags={"ticket": "GOV-1"}
        )
        (sdk,) = sent
        assert _without_name(json.loads(sdk["serviceRequestPayload"])) == _without_name(
            built["serviceRequestPayload"]
        )
        assert "Tags" not in built["serviceRequestPayload"]
        assert built["retryStrategy"] == sdk["retryStrategy"]
        assert built["timeoutConfig"] == sdk["timeoutConfig"]
        assert built["tags"] == sdk["tags"] == {"ticket": "GOV-1", "project": "vision"}
    assert sdk["retryStrategy"] == RETRY


@pytest.mark.slow  # the SageMaker SDK and a whole local runtime
def test_a_model_trainer_reaches_the_simulated_batch_with_the_sdks_settings(
    served: tuple[Any, str],
) -> None:
    runtime, url = served
    queue = GovernedTrainingQueue(Client.local(url, ALICE))
    job = queue.submit(
        trainer(),
        inputs(),
        retry_config=RETRY,
        timeout={"attemptDurationSeconds": 7200},
        tags={"ticket": "GOV-1234"},
        team="research",
        workload_class="exploratory",
        level="standard",
        checkpoint_interval_seconds=600,
    )
    assert job.accepted.state == "QUEUED"
    assert job.accepted.quotaShareName == "background"
    runtime.advance(5)

    view = job.describe()
    batch_id = view.batchJobId
    assert batch_id is not None
    described = runtime.batch.describe_service_job(jobId=batch_id)
    payload = json.loads(described["serviceRequestPayload"])
    expected = queue.build(trainer(), inputs())["serviceRequestPayload"]
    assert _without_name(payload) == _without_name(expected)
    assert payload["TrainingJobName"] == job.job_name == described["jobName"]
    assert payload["RoleArn"] == ROLE
    assert payload["InputDataConfig"][0]["DataSource"]["S3DataSource"]["S3Uri"] == (
        "s3://research/train/"
    )
    assert described["retryStrategy"] == RETRY
    assert described["timeoutConfig"] == {"attemptDurationSeconds": 7200}
    tags = described["tags"]
    assert (tags["ticket"], tags["project"]) == ("GOV-1234", "vision")
    assert tags["quotagov:submissionId"] == job.submission_id
    assert tags["quotagov:team"] == "research"
    assert described["schedulingPriority"] == 10

    # a priority changes only through the escalation flow, never UpdateServiceJob
    with pytest.raises(PermissionError, match="escalation"):
        job.update(9999)
    escalation = job.escalate("high", "paper deadline on Friday")
    assert (escalation.status, escalation.direct, escalation.requestedLevel) == (
        "PENDING",
        False,
        "high",
    )
    runtime.advance(5)
    assert runtime.batch.describe_service_job(jobId=batch_id)["schedulingPriority"] == 10


@pytest.mark.slow  # the SageMaker SDK and a whole local runtime
def test_priority_and_share_stay_the_policys(served: tuple[Any, str]) -> None:
    """The SDK's own priority and share parameters are refused before anything is sent;
    a request the policy refuses raises with every reason."""
    _, url = served
    queue = GovernedTrainingQueue(Client.local(url, ALICE))
    common: dict[str, Any] = {
        "team": "research",
        "workload_class": "exploratory",
        "checkpoint_interval_seconds": 600,
    }
    with pytest.raises(TypeError, match="priority"):
        queue.submit(trainer(), inputs(), level="standard", priority=9999, **common)
    with pytest.raises(TypeError, match="quota_share_name"):
        queue.submit(trainer(), inputs(), level="standard", quota_share_name="reserved", **common)
    with pytest.raises(SubmissionRefusedError) as refused:
        queue.submit(trainer(), inputs(), level="urgent", **common)
    assert refused.value.reasons == [
        "priorityLevel: level 'urgent' needs an approved escalation; submit at one of "
        "standard and request 'urgent' with POST /jobs/{jobId}/escalations"
    ]
    listed = Client.local(url, ALICE).list_jobs("research")
    assert [(j.state, j.jobName.startswith("resnet-sweep")) for j in listed] == [("REFUSED", True)]
