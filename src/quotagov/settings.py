"""Deployment settings, read from the environment the SAM template sets.

Every Lambda function and the local runtime build one :class:`Settings` with
:meth:`Settings.from_env`. A missing variable is only an error when the code that
needs it asks for it (:meth:`Settings.require`), so a function does not need the
settings of other functions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Settings:
    """Names of the resources a function talks to (all strings, empty when unset).

    Attributes map one to one to environment variables (upper snake case of the
    attribute name), e.g. ``jobs_table`` <- ``JOBS_TABLE``.
    """

    job_queue: str = ""  #: governed job queue ARN (JOB_QUEUE)
    jobs_table: str = ""  #: submissions and job records (JOBS_TABLE)
    escalations_table: str = ""  #: escalation requests (ESCALATIONS_TABLE)
    audit_table: str = ""  #: append-only audit log, the audit writer's only (AUDIT_TABLE)
    #: the queue through which other functions hand decisions to the writer (AUDIT_QUEUE_URL)
    audit_queue_url: str = ""
    audit_seal_key: str = ""  #: KMS HMAC_256 key sealing audit records (AUDIT_SEAL_KEY)
    #: KMS HMAC_256 key proving the sender of queue messages and records (MESSAGE_KEY)
    message_key: str = ""
    audit_digest_bucket: str = ""  #: S3 bucket (Object Lock) of the digests (AUDIT_DIGEST_BUCKET)
    audit_digest_key: str = ""  #: KMS ECC_NIST_P256 key signing digests (AUDIT_DIGEST_KEY)
    #: PEM/DER file of the digest public key, used instead of kms:GetPublicKey by
    #: ``quotagov audit verify`` (AUDIT_DIGEST_PUBLIC_KEY)
    audit_digest_public_key: str = ""
    idempotency_table: str = ""  #: Powertools Idempotency (IDEMPOTENCY_TABLE)
    submission_queue_url: str = ""  #: SQS submission queue (SUBMISSION_QUEUE_URL)
    #: SQS queue of recorded decisions for ApplyDecisionsFunction (APPLY_QUEUE_URL); set
    #: on the functions that record decisions but must not act on Batch themselves
    apply_queue_url: str = ""
    #: SQS queue of owner notices for ApplyDecisionsFunction (OWNER_NOTICE_QUEUE_URL):
    #: the submit worker and the reconciler, which hold no Slack secret, send the
    #: submissions they fail there; the apply function reads it to tell that queue's
    #: records from the ApplyQueue's
    owner_notice_queue_url: str = ""
    policy_parameter: str = ""  #: SSM parameter holding the policy YAML (POLICY_PARAMETER)
    policy_file: str = ""  #: local policy file, used instead of SSM when set (POLICY_FILE)
    slack_secret_arn: str = ""  #: Secrets Manager secret with the Slack tokens (SLACK_SECRET_ARN)
    #: Secrets Manager secret with the Slack request signing secret alone
    #: (SLACK_SIGNING_SECRET_ARN; only the Slack function may read it)
    slack_signing_secret_arn: str = ""
    slack_api_url: str = ""  #: Slack Web API base URL override, ends with '/' (SLACK_API_URL)
    approval_channel: str = ""  #: default Slack channel for approvals (APPROVAL_CHANNEL)
    platform_channel: str = ""  #: Slack channel of the platform team (PLATFORM_CHANNEL)
    job_view_url: str = ""  #: URL of a job's view with {jobId}, linked in owner DMs (JOB_VIEW_URL)
    #: quotagov's own IAM role ARNs, comma-separated (CONTROLLER_PRINCIPALS); the audit
    #: trail names the decision behind calls made by these roles
    controller_principals: str = ""
    #: seconds a submission may stay QUEUED before the reconciler re-queues or fails it
    #: (STALE_SUBMISSION_SECONDS; empty: 900)
    stale_submission_seconds: str = ""
    #: seconds the audit holds a CloudTrail-recorded call after its eventTime before
    #: writing it in (eventTime, eventID) order (AUDIT_SETTLE_SECONDS; required by the
    #: audit function; 0 writes on arrival)
    audit_settle_seconds: str = ""

    @classmethod
    def variables(cls) -> list[str]:
        """The environment variable of every setting (``JOB_QUEUE``, ``JOBS_TABLE``, ...)."""
        return [f.name.upper() for f in fields(cls)]

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read every field from ``environ`` (default ``os.environ``)."""
        env = os.environ if environ is None else environ
        return cls(**{f.name: env.get(f.name.upper(), "") for f in fields(cls)})

    def require(self, name: str) -> str:
        """Return the setting ``name``.

        Raises:
            RuntimeError: naming the environment variable when it is empty.
        """
        value: str = getattr(self, name)
        if not value:
            raise RuntimeError(f"setting {name.upper()} is not set in the environment")
        return value
