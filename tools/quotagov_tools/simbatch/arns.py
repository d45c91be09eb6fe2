"""The ARN formats of the simulated Batch's resources, written once.

Formats (Service Authorization Reference, "Actions, resources, and condition keys for AWS
Batch", https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsbatch.html,
resource types; the training job's name as in the example of AWS Batch User Guide,
"Service job state change events",
https://docs.aws.amazon.com/batch/latest/userguide/service-job-events.html):

- job queue: ``arn:aws:batch:<region>:<account>:job-queue/<name>``;
- quota share: ``<job queue ARN>/quota-share/<name>``;
- service job: ``arn:aws:batch:<region>:<account>:service-job/<jobId>``;
- training job (one per attempt): ``arn:aws:sagemaker:<region>:<account>:training-job/
  AWSBatch<TrainingJobName><32 hex>``.
"""

from __future__ import annotations

import re

_JOB_QUEUE_ARN = re.compile(r"^arn:aws:batch:([a-z0-9-]+):(\d{12}):job-queue/([A-Za-z0-9_-]+)$")


def job_queue_prefix(region: str, account: str) -> str:
    """``arn:aws:batch:<region>:<account>:job-queue/``: a job queue ARN without its name."""
    return f"arn:aws:batch:{region}:{account}:job-queue/"


def job_queue_arn(region: str, account: str, name: str) -> str:
    """The ARN of job queue ``name``."""
    return f"{job_queue_prefix(region, account)}{name}"


def split_job_queue_arn(text: str) -> tuple[str, str, str] | None:
    """``(region, account, name)`` of a job queue ARN; None when ``text`` is not one."""
    match = _JOB_QUEUE_ARN.match(text)
    if match is None:
        return None
    region, account, name = match.groups()
    return region, account, name


def quota_share_arn(queue_arn: str, name: str) -> str:
    """The ARN of quota share ``name`` of the job queue ``queue_arn``."""
    return f"{queue_arn}/quota-share/{name}"


def service_job_arn(region: str, account: str, job_id: str) -> str:
    """The ARN of the service job ``job_id``."""
    return f"arn:aws:batch:{region}:{account}:service-job/{job_id}"


def job_id_of(job_id_or_arn: str) -> str:
    """The ``jobId`` of a ``jobId`` or a service-job ARN (the part after the last ``/``)."""
    if job_id_or_arn.startswith("arn:"):
        return job_id_or_arn.rsplit("/", 1)[-1]
    return job_id_or_arn


def training_job_arn(region: str, account: str, training_job_name: str, suffix: str) -> str:
    """The ARN of one attempt's training job: ``AWSBatch<TrainingJobName><suffix>``."""
    name = f"AWSBatch{training_job_name}{suffix}"
    return f"arn:aws:sagemaker:{region}:{account}:training-job/{name}"
