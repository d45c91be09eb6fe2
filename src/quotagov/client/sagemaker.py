"""``GovernedTrainingQueue``: the SageMaker Python SDK's ``TrainingQueue``, through quotagov.

A researcher who submits with the SDK (v3: ``ModelTrainer`` and
``sagemaker.train.aws_batch.TrainingQueue``, https://sagemaker.readthedocs.io) swaps
the queue and adds the three governance names::

    queue = GovernedTrainingQueue(Client.deployed(api_url))
    job = queue.submit(trainer, inputs, team="research",
                       workload_class="exploratory", level="standard",
                       checkpoint_interval_seconds=600)
    job.wait()

:meth:`GovernedTrainingQueue.submit` builds the request exactly as the SDK's
``TrainingQueue.submit`` does and sends it to ``POST /jobs`` instead of Batch's
``SubmitServiceJob``:

- the ``CreateTrainingJob`` request from the ``ModelTrainer`` and ``inputs``. The SDK
  has no public call that returns it without submitting, so this uses the one
  ``TrainingQueue`` itself uses, ``ModelTrainer._create_training_job_args(
  input_data_config=inputs, boto3=True)``: a private method, hence the version pin of
  the ``sagemaker`` extra (``sagemaker-train`` 1.27 and later 1.x) and
  ``tests/client/test_sagemaker_queue.py``, which checks the request against what the
  SDK's own ``TrainingQueue.submit`` sends to a stubbed Batch client;
- the SDK's Batch-level settings, with the SDK's defaults: ``retryStrategy``
  (``retry_config``, default one attempt that retries SageMaker's
  ``InternalServerError``), ``timeoutConfig`` (``timeout``, default one day) and
  ``tags`` (``tags`` merged with the trainer's ``Tags``, which the SDK moves out of
  the training request; the trainer's win on a shared key).

Priority and share are not the caller's to set: ``priority``, ``share_identifier``,
``quota_share_name`` and ``preemption_config`` of ``TrainingQueue.submit`` are refused
(``TypeError``); quotagov routes the job from ``team``, ``workload_class`` and
``level``. The job object raises a priority only by :meth:`GovernedTrainingJob.escalate`
(the escalation flow), never by ``UpdateServiceJob``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from quotagov.client.api import Client, current_status, is_final
from quotagov.handlers.api_contract import EscalationAnswer, JobView, SubmissionAccepted

#: ``TrainingQueue.submit`` parameters quotagov decides itself (refused here).
ROUTED_BY_POLICY = ("priority", "share_identifier", "quota_share_name", "preemption_config")


def _sdk() -> tuple[Any, Any, Any]:
    """``ModelTrainer``, ``Mode`` and the SDK's Batch constants module."""
    try:
        from sagemaker.train.aws_batch import constants
        from sagemaker.train.model_trainer import Mode, ModelTrainer
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise ImportError(
            "GovernedTrainingQueue needs the SageMaker SDK: pip install 'quotagov[sagemaker]'"
        ) from exc
    return ModelTrainer, Mode, constants


def merged_tags(
    tags: Mapping[str, str] | None, training_tags: list[Mapping[str, str]] | None
) -> dict[str, str] | None:
    """The service job's tags as the SDK makes them: ``tags`` updated with the training
    request's ``[{"Key", "Value"}]`` tags (those win); None when both are empty."""
    if not tags and not training_tags:
        return None
    merged = dict(tags or {})
    merged.update({str(t["Key"]): str(t["Value"]) for t in training_tags or []})
    return merged


def training_request(training_job: Any, inputs: Any) -> dict[str, Any]:
    """The ``CreateTrainingJob`` request (boto3 member names) the SDK builds from
    ``training_job`` (a ``ModelTrainer`` in ``Mode.SAGEMAKER_TRAINING_JOB``) and
    ``inputs``. Raises ``TypeError``/``ValueError`` as ``TrainingQueue.submit`` does."""
    model_trainer, mode, _ = _sdk()
    if not isinstance(training_job, model_trainer):
        raise TypeError(
            f"training_job must be an instance of ModelTrainer, but got {type(training_job)}"
        )
    if training_job.training_mode != mode.SAGEMAKER_TRAINING_JOB:
        raise ValueError("TrainingQueue requires a ModelTrainer with Mode.SAGEMAKER_TRAINING_JOB")
    request: dict[str, Any] = training_job._create_training_job_args(
        input_data_config=inputs, boto3=True
    )
    return request


class GovernedTrainingJob:
    """A job submitted through quotagov: the SDK's ``TrainingQueuedJob`` methods that
    make sense under governance.

    Attributes:
        submission_id: quotagov's id (``quotagov jobs show ID``).
        job_name: the Batch job name.
        accepted: the ``POST /jobs`` answer (share, schedulingPriority, ...).
    """

    def __init__(self, client: Client, accepted: SubmissionAccepted, job_name: str) -> None:
        self.client = client
        self.accepted = accepted
        self.submission_id = accepted.submissionId
        self.job_name = job_name

    def describe(self) -> JobView:
        """``GET /jobs/{id}``: the submission, Batch's view (``batch``) and its chain."""
        return self.client.get_job(self.submission_id)

    def status(self) -> str:
        """Batch's status once submitted, else the submission's state."""
        return current_status(self.describe())

    def wait(self, timeout: float | None = None, interval: float = 5.0) -> JobView:
        """Poll every ``interval`` seconds until the job is final (``SUCCEEDED``,
        ``FAILED``, refused); returns its last view (of the newest resubmission when it
        was resubmitted). Raises ``TimeoutError`` after ``timeout`` seconds."""
        last: JobView | None = None
        for view in self.client.watch(self.submission_id, interval=interval, timeout=timeout):
            last = view
        assert last is not None and is_final(last)
        return last

    def escalate(self, level: str, reason: str) -> EscalationAnswer:
        """Ask for priority ``level`` (``POST /jobs/{id}/escalations``): applied at once
        for a level the team sets directly, else approved in Slack first."""
        return self.client.escalate(self.submission_id, level, reason)

    def update(self, scheduling_priority: int) -> Any:
        """Refused: under quotagov a priority changes only through :meth:`escalate`.

        Raises:
            PermissionError: always.
        """
        raise PermissionError(
            f"schedulingPriority {scheduling_priority}: quotagov changes a job's priority "
            "only through an escalation; call escalate(level, reason)"
        )


class GovernedTrainingQueue:
    """A drop-in for ``sagemaker.train.aws_batch.TrainingQueue`` that submits through
    quotagov's ``client`` (:class:`~quotagov.client.Client`).

    Attributes:
        client: the API client (deployed, SigV4; or ``quotagov serve``).
        queue_name: informational only: the queue is the one the deployed stack governs.
    """

    def __init__(self, client: Client, queue_name: str | None = None) -> None:
        self.client = client
        self.queue_name = queue_name

    def build(
        self,
        training_job: Any,
        inputs: Any,
        job_name: str | None = None,
        retry_config: Mapping[str, Any] | None = None,
        timeout: Mapping[str, Any] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """What :meth:`submit` sends, without sending it: ``{"jobName",
        "serviceRequestPayload" (a dict), "retryStrategy", "timeoutConfig", "tags"}``."""
        _, _, constants = _sdk()
        payload = training_request(training_job, inputs)
        training_tags = payload.pop("Tags", None)
        return {
            "jobName": job_name or payload["TrainingJobName"],
            "serviceRequestPayload": payload,
            "retryStrategy": copy.deepcopy(
                dict(retry_config or constants.DEFAULT_SAGEMAKER_TRAINING_RETRY_CONFIG)
            ),
            "timeoutConfig": dict(timeout or constants.DEFAULT_TIMEOUT),
            "tags": merged_tags(tags, training_tags),
        }

    def submit(
        self,
        training_job: Any,
        inputs: Any,
        job_name: str | None = None,
        retry_config: Mapping[str, Any] | None = None,
        timeout: Mapping[str, Any] | None = None,
        tags: Mapping[str, str] | None = None,
        *,
        team: str,
        workload_class: str,
        level: str,
        checkpoint_interval_seconds: int | None = None,
        client_request_id: str | None = None,
        **routed: Any,
    ) -> GovernedTrainingJob:
        """Build the request as ``TrainingQueue.submit`` does (:meth:`build`) and submit
        it with ``POST /jobs`` for ``team`` in ``workload_class`` at ``level``.

        Raises:
            TypeError: ``training_job`` is not a ``ModelTrainer``, or one of
                :data:`ROUTED_BY_POLICY` was passed.
            ValueError: the trainer is not in ``Mode.SAGEMAKER_TRAINING_JOB``.
            quotagov.client.SubmissionRefusedError: the policy refused it (every reason).
            quotagov.client.ApiError: another error answer (faults by field path).
        """
        refused = sorted(set(routed) & set(ROUTED_BY_POLICY))
        if refused or routed:
            names = ", ".join(refused or sorted(routed))
            raise TypeError(
                f"{names}: quotagov decides priority, share and preemption from team, "
                "workload_class and level; ask for more with job.escalate(level, reason)"
            )
        built = self.build(training_job, inputs, job_name, retry_config, timeout, tags)
        accepted = self.client.submit(
            json.dumps(built["serviceRequestPayload"]),  # the string form the SDK sends
            team=team,
            workload_class=workload_class,
            level=level,
            job_name=built["jobName"],
            checkpoint_interval_seconds=checkpoint_interval_seconds,
            client_request_id=client_request_id,
            retry_strategy=built["retryStrategy"],
            timeout_config=built["timeoutConfig"],
            tags=built["tags"],
        )
        return GovernedTrainingJob(self.client, accepted, built["jobName"])
