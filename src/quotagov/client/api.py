"""The Python client of quotagov's REST API: :class:`Client`.

One method per operation, each answering the API's own models
(:mod:`quotagov.handlers.api_contract`, the models ``docs/openapi.json`` documents):

=========================  ====================================  ====================
method                     request                               result
=========================  ====================================  ====================
:meth:`Client.submit`      ``POST /jobs``                        ``SubmissionAccepted``
:meth:`Client.list_jobs`   ``GET /jobs`` (every page)            ``list[JobSummary]``
:meth:`Client.get_job`     ``GET /jobs/{id}``                    ``JobView``
:meth:`Client.why`         ``GET /jobs/{id}``, its ``waiting``   :class:`Waiting`
:meth:`Client.watch`       ``GET /jobs/{id}`` until final        ``JobView`` per change
:meth:`Client.escalate`    ``POST /jobs/{id}/escalations``       ``EscalationAnswer``
:meth:`Client.decide`      ``POST /jobs/{id}/disposition``       ``DispositionAnswer``
=========================  ====================================  ====================

Every answer that is not a success raises :class:`ApiError` with the API's ``message``
and ``faults`` (``{path, fault}``, for 400 and 415); a policy refusal (422 of
``POST /jobs``) raises :class:`SubmissionRefusedError` with every reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from quotagov.client.transport import (
    DEFAULT_TIMEOUT_SECONDS,
    HttpAnswer,
    LocalTransport,
    SigV4Transport,
    TokenTransport,
    Transport,
)
from quotagov.handlers.api_contract import (
    DispositionAnswer,
    EscalationAnswer,
    Fault,
    JobPage,
    JobSummary,
    JobView,
    SubmissionAccepted,
)

#: Submission states that end a submission (it never reaches Batch).
FINAL_SUBMISSION_STATES = frozenset({"REFUSED", "FAILED"})
#: Batch service job statuses that end an attempt chain (``DescribeServiceJob``).
FINAL_BATCH_STATUSES = frozenset({"SUCCEEDED", "FAILED"})


class ApiError(Exception):
    """The API answered an error.

    Attributes:
        status: the HTTP status (400, 401, 403, 404, 409, 415, 422, 503).
        message: the answer's ``message``.
        faults: each input fault by field path (400 and 415), else empty.
        body: the whole answer (e.g. ``submissionId`` of a 503, ``field`` of a 409).
    """

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body if isinstance(body, dict) else {"message": str(body)}
        self.message = str(self.body.get("message") or f"HTTP {status}")
        self.faults = [Fault.model_validate(f) for f in self.body.get("faults") or []]
        super().__init__(f"{status}: {self.message}")


class SubmissionRefusedError(ApiError):
    """422 of ``POST /jobs``: the policy refused the submission (stored ``REFUSED``), or
    a retry of one that failed for good (``FAILED``).

    Attributes:
        submission_id: the stored submission (``GET /jobs/{id}`` shows it).
        reasons: every reason, each starting with the field it is about.
    """

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(status, body)
        self.submission_id = str(self.body.get("submissionId", ""))
        self.reasons = [str(r) for r in self.body.get("reasons") or []]
        self.message = f"refused ({self.body.get('state', 'REFUSED')}): " + "; ".join(self.reasons)
        self.args = (f"{status}: {self.message}",)


class Waiting(BaseModel):
    """Why a RUNNABLE job waits (``batch.waiting`` of the job view; absent parts None).

    Attributes:
        status: Batch's status of the service job (None before it reached Batch).
        queue_position, share_position, queue_length: its place at the front of the
            queue and among its share's jobs (``GetJobQueueSnapshot``; None when it is
            not among the first 100).
        reason_code, reason: why it waits (``SHARE_AT_LIMIT``, ...) and the same in words.
        estimated_start_at: the latest start if the jobs ahead run to their limit (an
            instant, ISO 8601 UTC as the API answers it), None when it cannot be bounded.
        error: why the wait could not be explained (Batch could not be read).
    """

    model_config = ConfigDict(frozen=True)

    submission_id: str
    state: str
    status: str | None = None
    queue_position: int | None = None
    share_position: int | None = None
    queue_length: int | None = None
    reason_code: str | None = None
    reason: str | None = None
    estimated_start_at: str | None = None
    error: str | None = None


def current_status(view: JobView) -> str:
    """One word for where a submission is: Batch's status once submitted (``RUNNABLE``,
    ``RUNNING``, ``SUCCEEDED``, ...), else the submission's state (``QUEUED``,
    ``REFUSED``, ``FAILED``, ``SUBMITTED`` while Batch cannot be read)."""
    if view.state == "SUBMITTED" and view.batch is not None and view.batch.status:
        return view.batch.status
    return view.state


def is_final(view: JobView) -> bool:
    """Whether ``view`` will not change by itself: refused or failed before Batch, or
    Batch's service job ended (``SUCCEEDED`` or ``FAILED``)."""
    status = current_status(view)
    return view.state in FINAL_SUBMISSION_STATES or status in FINAL_BATCH_STATUSES


def waiting_of(view: JobView) -> Waiting:
    """The :class:`Waiting` of a job view."""
    batch = view.batch
    waiting = batch.waiting if batch is not None else None
    position = waiting.position if waiting is not None else None
    reason = waiting.reason if waiting is not None else None
    return Waiting(
        submission_id=view.submissionId,
        state=view.state,
        status=batch.status if batch is not None else None,
        queue_position=position.queue if position is not None else None,
        share_position=position.share if position is not None else None,
        queue_length=position.queueLength if position is not None else None,
        reason_code=reason.code if reason is not None else None,
        reason=reason.text if reason is not None else None,
        estimated_start_at=waiting.estimatedStartAt if waiting is not None else None,
        error=(waiting.error if waiting is not None else None)
        or (batch.error if batch is not None else None),
    )


class Client:
    """quotagov's API through ``transport`` (:meth:`deployed` or :meth:`local` build one).

    Raises (every method): :class:`ApiError` for an error answer,
    :class:`~quotagov.client.transport.TransportError` when the API cannot be reached.
    """

    def __init__(self, transport: Transport) -> None:
        self.transport = transport

    @classmethod
    def deployed(
        cls,
        api_url: str,
        *,
        profile: str | None = None,
        region: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> Client:
        """A client of a deployed stack's ``ApiUrl``, signing with SigV4 as the caller of
        botocore's credential chain (``profile``: a named profile of the shared files)."""
        import botocore.session

        session = botocore.session.Session(profile=profile)
        return cls(SigV4Transport(api_url, session=session, region=region, timeout=timeout))

    @classmethod
    def with_token(
        cls, api_url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT_SECONDS
    ) -> Client:
        """A client of a deployed stack's Cognito (JWT) API (``JwtApiUrl`` output), calling
        with a user pool ID ``token`` (the caller is the token's ``sub``). Raises
        ``TransportError`` for a token that is not a JWT or a plain-http remote URL."""
        return cls(TokenTransport(api_url, token, timeout=timeout))

    @classmethod
    def local(
        cls, api_url: str, principal: str, *, timeout: float = DEFAULT_TIMEOUT_SECONDS
    ) -> Client:
        """A client of ``quotagov serve`` at loopback ``api_url``, calling as ``principal``
        (an IAM principal ARN of the policy). Raises ``TransportError`` for a URL that
        is not loopback."""
        return cls(LocalTransport(api_url, principal, timeout=timeout))

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, str] | None = None,
        body: Any = None,
        refusal: type[ApiError] = ApiError,
    ) -> HttpAnswer:
        answer = self.transport.send(method, path, query=query, body=body)
        if answer.status == 422 and refusal is not ApiError:
            raise refusal(answer.status, answer.body)
        if not 200 <= answer.status < 300:
            raise ApiError(answer.status, answer.body)
        return answer

    def submit(
        self,
        training_request: Mapping[str, Any] | str,
        *,
        team: str,
        workload_class: str,
        level: str,
        job_name: str | None = None,
        quota_share: str | None = None,
        checkpoint_interval_seconds: int | None = None,
        client_request_id: str | None = None,
        retry_strategy: Mapping[str, Any] | None = None,
        timeout_config: Mapping[str, Any] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> SubmissionAccepted:
        """``POST /jobs``: submit a SageMaker ``CreateTrainingJob`` request (an object or
        its JSON string) for ``team`` in ``workload_class`` at priority ``level``.

        ``retry_strategy``, ``timeout_config`` and ``tags`` are ``SubmitServiceJob``'s
        ``retryStrategy``, ``timeoutConfig`` and ``tags``, within the class's bounds.
        Raises :class:`SubmissionRefusedError` when the policy refuses it (422).
        """
        body: dict[str, Any] = {
            "team": team,
            "workloadClass": workload_class,
            "priorityLevel": level,
            "serviceRequestPayload": training_request
            if isinstance(training_request, str)
            else dict(training_request),
        }
        optional = {
            "jobName": job_name,
            "quotaShareName": quota_share,
            "checkpointIntervalSeconds": checkpoint_interval_seconds,
            "clientRequestId": client_request_id,
            "retryStrategy": dict(retry_strategy) if retry_strategy else None,
            "timeoutConfig": dict(timeout_config) if timeout_config else None,
            "tags": dict(tags) if tags else None,
        }
        body.update({k: v for k, v in optional.items() if v is not None})
        answer = self._call("POST", "/jobs", body=body, refusal=SubmissionRefusedError)
        return SubmissionAccepted.model_validate(answer.body)

    def list_jobs(
        self, team: str, *, state: str | None = None, limit: int | None = None
    ) -> list[JobSummary]:
        """``GET /jobs``: ``team``'s submissions, newest first (every page, or the first
        ``limit``), optionally only those in submission ``state``."""
        jobs: list[JobSummary] = []
        token: str | None = None
        while True:
            query = {"team": team}
            if state:
                query["state"] = state
            if token:
                query["nextToken"] = token
            page = JobPage.model_validate(self._call("GET", "/jobs", query=query).body)
            jobs += page.jobs
            token = page.nextToken
            if not token or (limit is not None and len(jobs) >= limit):
                return jobs if limit is None else jobs[:limit]

    def get_job(self, job_id: str) -> JobView:
        """``GET /jobs/{job_id}``: the submission, Batch's view and its chain."""
        return JobView.model_validate(self._call("GET", f"/jobs/{job_id}").body)

    def why(self, job_id: str) -> Waiting:
        """Why ``job_id`` waits: its place, the reason and the estimated start."""
        return waiting_of(self.get_job(job_id))

    def watch(
        self,
        job_id: str,
        *,
        interval: float = 10.0,
        timeout: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        follow: bool = True,
    ) -> Iterator[JobView]:
        """Yield ``job_id``'s view first and then on every change of status, waiting
        position or reason (polled every ``interval`` seconds), until it is final
        (:func:`is_final`) or ``timeout`` seconds passed (``TimeoutError``). With
        ``follow``, a final job that was resubmitted is followed to its newest successor.
        """
        start = clock()
        last: tuple[Any, ...] | None = None
        while True:
            view = self.get_job(job_id)
            waiting = waiting_of(view)
            key = (
                view.submissionId,
                current_status(view),
                waiting.queue_position,
                waiting.reason_code,
            )
            if key != last:
                last = key
                yield view
            if is_final(view):
                successors = view.chain.successorIds if view.chain is not None else []
                if not (follow and successors):
                    return
                job_id = str(successors[-1])
                continue
            if timeout is not None and clock() - start >= timeout:
                raise TimeoutError(f"{job_id}: not final after {timeout:g} s")
            sleep(interval)

    def escalate(self, job_id: str, level: str, reason: str) -> EscalationAnswer:
        """``POST /jobs/{job_id}/escalations``: ask for priority ``level`` because of
        ``reason``. ``status`` PENDING (approval in Slack) or APPROVED/APPLIED
        (``direct``)."""
        body = {"level": level, "reason": reason}
        return EscalationAnswer.model_validate(
            self._call("POST", f"/jobs/{job_id}/escalations", body=body).body
        )

    def decide(self, job_id: str, choice: str) -> DispositionAnswer:
        """``POST /jobs/{job_id}/disposition``: the owner's ``choice`` (``resubmit``,
        ``reclassify`` or ``abandon``) for a job whose preemption retries ran out."""
        return DispositionAnswer.model_validate(
            self._call("POST", f"/jobs/{job_id}/disposition", body={"choice": choice}).body
        )
