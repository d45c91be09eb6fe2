"""What the demo does and reads through the runtime, for the story in :mod:`.demo_story`.

:class:`DemoDriver` holds the story's plumbing: timestamped lines and checks
(:class:`DemoResult`), virtual time, the API calls a user makes (``POST /jobs``,
``GET /jobs/{id}``), the readings of what happened (preemptions and running jobs from
the published Batch events, lost work from the job records, Slack messages), signed
Slack clicks, and the ``--json`` document. Nothing is assumed: every reading goes
through the API, the fake Slack, the events or the audit table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from quotagov.batch_semantics import lost_seconds
from quotagov_tools.local.api_gateway import ApiResponse
from quotagov_tools.local.lambda_events import iso_time
from quotagov_tools.local.runtime import LocalRuntime
from quotagov_tools.local.slack_clicks import (
    ButtonNotFoundError,
    block_actions_payload,
    signed_form,
)
from quotagov_tools.local.stack import ACCOUNT_ID

#: Tries of one API call that keeps answering 503 (:meth:`DemoDriver.api`).
API_TRIES = 5

_PREEMPTED = re.compile(r"PREEMPTED:(IN_SHARE|CROSS_SHARE)\b.*?(arn:aws:batch:\S+)")


@dataclass
class DemoResult:
    """What the demo saw: the story lines, the JSON document and the failed checks."""

    lines: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    document: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when every check passed."""
        return not self.failures


def training_request(
    name: str, run_seconds: int, checkpoint_interval: int | None = None, *, team: str
) -> dict[str, Any]:
    """A SageMaker ``CreateTrainingJob`` request for one ml.g5.xlarge, with the team's
    execution role ``sm-exec-<team>`` (bound to the team in the example policy).

    The simulated Batch reads how long the job runs and how often it checkpoints
    from the ``quotagov:simRunSeconds`` / ``quotagov:simCheckpointIntervalSeconds``
    tags (see :mod:`quotagov_tools.simbatch.payload`).
    """
    tags = [{"Key": "quotagov:simRunSeconds", "Value": str(run_seconds)}]
    request: dict[str, Any] = {
        "TrainingJobName": name,
        "RoleArn": f"arn:aws:iam::{ACCOUNT_ID}:role/sm-exec-{team}",
        "AlgorithmSpecification": {
            "TrainingImage": f"{ACCOUNT_ID}.dkr.ecr.eu-west-1.amazonaws.com/train:1.0",
            "TrainingInputMode": "File",
        },
        "OutputDataConfig": {"S3OutputPath": "s3://example-ml-artifacts-euw1/output/"},
        "ResourceConfig": {
            "InstanceType": "ml.g5.xlarge",
            "InstanceCount": 1,
            "VolumeSizeInGB": 50,
        },
        # a cap a researcher would set: the expected run time plus ten minutes (the
        # estimated start of a waiting job assumes every attempt runs to its cap)
        "StoppingCondition": {"MaxRuntimeInSeconds": run_seconds + 600},
        "Tags": tags,
    }
    if checkpoint_interval is not None:
        request["CheckpointConfig"] = {
            "S3Uri": f"s3://example-ml-artifacts-euw1/checkpoints/{name}/"
        }
        tags.append(
            {"Key": "quotagov:simCheckpointIntervalSeconds", "Value": str(checkpoint_interval)}
        )
    return request


class DemoDriver:
    """The demo's plumbing on a started :class:`LocalRuntime`; the steps are
    :class:`~quotagov_tools.local.demo_story.Demo`'s.

    Args:
        runtime: the embedded runtime (virtual clock at the walkthrough's epoch).
        echo: called with each story line as it happens (``None``: collect only).
    """

    def __init__(self, runtime: LocalRuntime, echo: Callable[[str], None] | None = None):
        self.rt = runtime
        self.t0 = runtime.clock.now()
        self.echo = echo
        self.result = DemoResult()
        self.submissions: dict[str, dict[str, Any]] = {}
        self.escalations: list[dict[str, Any]] = []
        self.dispositions: list[dict[str, Any]] = []
        self.waiting: list[dict[str, Any]] = []
        self._told = 0
        #: 503 answers the driver retried (only a run with injected faults meets them).
        self.unavailable = 0

    # -- story ----------------------------------------------------------------------

    @property
    def t(self) -> int:
        """Seconds since the demo started (virtual time)."""
        return round(self.rt.clock.now() - self.t0)

    def say(self, text: str, at: int | None = None) -> None:
        """Add a timestamped line to the story; ``at`` (seconds since the start) is when
        what the line tells happened, when that is not the virtual clock's now (the
        demo advances a second past an event to see its effects delivered)."""
        t = self.t if at is None else at
        line = f"[t={t:>5}s {iso_time(self.t0 + t)}] {text}"
        self.result.lines.append(line)
        if self.echo is not None:
            self.echo(line)

    def check(self, condition: bool, what: str) -> bool:
        """Record ``what`` as a failure unless ``condition``; returns ``condition``."""
        if not condition:
            self.result.failures.append(f"t={self.t}s: {what}")
            self.say(f"  CHECK FAILED: {what}")
        return condition

    def at(self, t: int) -> None:
        """Advance virtual time to ``t`` seconds since the start (runs everything due)."""
        self.rt.advance_to(max(self.t0 + t, self.rt.clock.now()))

    # -- API helpers ------------------------------------------------------------------

    def submit(
        self,
        principal: str,
        name: str,
        *,
        team: str,
        workload_class: str,
        share: str,
        run_seconds: int,
        checkpoint_interval: int | None = None,
        level: str = "standard",
    ) -> ApiResponse:
        """``POST /jobs`` as ``principal``; remembers the submission under ``name``."""
        body: dict[str, Any] = {
            "team": team,
            "workloadClass": workload_class,
            "priorityLevel": level,
            "jobName": name,
            "quotaShareName": share,
            "clientRequestId": f"demo-{name}",
            "serviceRequestPayload": training_request(
                name, run_seconds, checkpoint_interval, team=team
            ),
        }
        if checkpoint_interval is not None:
            body["checkpointIntervalSeconds"] = checkpoint_interval
        response = self.api("POST", "/jobs", principal=principal, body=body)
        answer = response.json() or {}
        self.submissions[name] = {
            "jobName": name,
            "principal": principal,
            "team": team,
            "workloadClass": workload_class,
            "requestedShare": share,
            "httpStatus": response.status,
            "submissionId": answer.get("submissionId"),
            "state": answer.get("state"),
            "reasons": answer.get("reasons", []),
        }
        return response

    def api(self, method: str, path: str, **request: Any) -> ApiResponse:
        """One API call as a client would make it: a 503 (the documented "retry the
        same request" answer) is retried, at most :data:`API_TRIES` tries in all."""
        response = self.rt.api(method, path, **request)
        for _ in range(API_TRIES - 1):
            if response.status != 503:
                break
            self.unavailable += 1
            response = self.rt.api(method, path, **request)
        return response

    def job(self, name: str) -> dict[str, Any]:
        """``GET /jobs/{submissionId}`` of ``name`` as its submitter (the view as JSON)."""
        entry = self.submissions[name]
        response = self.api(
            "GET", f"/jobs/{entry['submissionId']}", principal=entry["principal"], pump=False
        )
        view: dict[str, Any] = response.json() or {}
        return view

    def batch_status(self, name: str) -> str | None:
        """The Batch status of ``name`` as ``GET /jobs/{id}`` reports it."""
        batch = self.job(name).get("batch") or {}
        status = batch.get("status")
        return str(status) if status else None

    # -- events ------------------------------------------------------------------------

    def state_events(self) -> Iterator[dict[str, Any]]:
        """The ``Batch Service Job State Change`` details published so far."""
        for envelope in self.rt.published:
            if envelope.get("detail-type") == "Batch Service Job State Change":
                yield envelope["detail"]

    def preemptions(self) -> list[dict[str, Any]]:
        """Every preemption seen in the events: ``{jobName, kind, forJob, at}``.

        A preempted attempt carries ``PREEMPTED:<kind> ... <beneficiary job ARN>`` as
        its ``statusReason`` (the simulated Batch's wording; AWS does not document its
        text).
        """
        names = {d["jobArn"]: d["jobName"] for d in self.state_events() if "jobArn" in d}
        seen: dict[tuple[str, str], dict[str, Any]] = {}
        for detail in self.state_events():
            for attempt in detail.get("attempts") or []:
                found = _PREEMPTED.search(str(attempt.get("statusReason") or ""))
                if not found:
                    continue
                key = (detail["jobName"], str(attempt.get("startedAt")))
                seen.setdefault(
                    key,
                    {
                        "jobName": detail["jobName"],
                        "kind": found.group(1),
                        "forJob": names.get(found.group(2), found.group(2)),
                        "at": round((int(attempt.get("stoppedAt") or 0) / 1000) - self.t0),
                    },
                )
        return sorted(seen.values(), key=lambda p: (p["at"], p["jobName"]))

    def lost_work(self, name: str) -> list[tuple[float, float]]:
        """``(runSeconds, lostWorkSeconds)`` of each preemption of ``name``, from its record."""
        facts = self.job(name).get("jobState") or {}
        return [
            (float(p.get("runSeconds") or 0), float(p.get("lostWorkSeconds") or 0))
            for p in facts.get("preemptions") or []
        ]

    def check_lost_work(self, name: str, interval: int, at: int | None = None) -> None:
        """Check that each preemption of ``name`` lost the work since its last checkpoint."""
        lost = self.lost_work(name)
        self.check(
            bool(lost) and all(work == lost_seconds(run, interval) for run, work in lost),
            f"{name}: each preemption lost the work since its last checkpoint (got {lost})",
        )
        for run, work in lost:
            self.say(
                f"  {name}'s record: the attempt ran {run:g} s, lost {work:g} s of work", at=at
            )

    def running(self) -> list[str]:
        """Names of the jobs whose latest published status is RUNNING."""
        latest: dict[str, str] = {}
        for detail in self.state_events():
            latest[detail["jobName"]] = detail["status"]
        return sorted(name for name, status in latest.items() if status == "RUNNING")

    # -- owner notifications -------------------------------------------------------------

    def notifications(self) -> list[dict[str, Any]]:
        """Every owner DM in the notification log, with ``at`` in seconds since the start."""
        return [{**n, "at": round(float(n["at"]) - self.t0)} for n in self.rt.notifications()]

    def tell_owners(self) -> None:
        """Print the owner DMs sent since the last call, as the owner reads them, after
        checking that each is in the owner's Slack DM (the fake Slack)."""
        found = self.notifications()
        for note in found[self._told :]:
            message = (
                self.slack_message(str(note.get("channel")), str(note.get("ts")))
                if note.get("ts")
                else None
            )
            self.check(
                message is not None and message.channel == note["recipient"],
                f"the {note['kind']} DM about {note['jobName']} is in {note['recipient']}'s "
                f"Slack DM (delivery {note['delivery']})",
            )
            how = ", the earlier DM updated into a digest" if note["delivery"] == "digest" else ""
            text = str(note["text"]).replace("\n", "\n" + " " * 8)
            self.say(
                f"  Slack DM to {note['recipient']} ({note['kind']}{how}): {text}", at=note["at"]
            )
        self._told = len(found)

    # -- Slack -------------------------------------------------------------------------

    def slack_message(self, channel: str, ts: str) -> Any:
        """The fake Slack's current state of message ``channel``/``ts`` (or None)."""
        for message in self.rt.slack.messages:
            if message.channel == channel and message.ts == ts:
                return message
        return None

    def click(self, user: str, message: Any, action_id: str, *, sign: bool = True) -> ApiResponse:
        """POST a ``block_actions`` payload for the button ``action_id`` of ``message``.

        Signed like Slack does (v0, HMAC-SHA256 of ``v0:<timestamp>:<body>`` with the
        signing secret; Slack, "Verifying requests from Slack") unless ``sign`` is
        False, in which case
        a signature made with a wrong secret is sent.
        """
        try:
            payload = block_actions_payload(
                user=user,
                message=message.as_dict(),
                action_id=action_id,
                response_url=self.rt.slack.response_url_for(message.channel, message.ts),
                action_ts=self.rt.clock.now(),
            )
        except ButtonNotFoundError:
            raise AssertionError(f"no button {action_id} in message {message.ts}") from None
        secret = self.rt.signing_secret if sign else "not-the-signing-secret"
        body, headers = signed_form(payload, secret, self.rt.clock.now())
        return self.rt.api("POST", "/slack/interactions", body=body, headers=headers)

    # -- JSON ----------------------------------------------------------------------------

    def document(self) -> dict[str, Any]:
        """The ``--json`` document (see the module docstring and ``docs/local.md``)."""
        records = []
        try:
            records = self.rt.audit_records()
            verified = self.rt.audit_verify()
        except Exception as exc:
            self.check(False, f"reading the audit table failed: {exc}")
            verified = False
        findings = [
            {"seq": r.get("seq"), "event": r.get("eventName") or r.get("action"), **f}
            for r in records
            for f in (r.get("findings") or [])
            if isinstance(f, dict)
        ]
        return {
            "submissions": list(self.submissions.values()),
            "preemptions": self.preemptions(),
            "escalations": self.escalations,
            "dispositions": self.dispositions,
            "notifications": [
                {
                    "kind": n["kind"],
                    "jobName": n["jobName"],
                    "recipient": n["recipient"],
                    "text": n["text"],
                    "delivery": n["delivery"],
                    "at": n["at"],
                }
                for n in self.notifications()
            ],
            "waiting": self.waiting,
            "audit": {
                "records": len(records),
                "entries": [audit_entry(r) for r in records],
                "findings": findings,
                "chainVerified": verified,
            },
            "story": self.result.lines,
            "failures": self.result.failures,
        }


def audit_entry(record: dict[str, Any]) -> dict[str, Any]:
    """The short form of one audit record: seq, kind, action, actor, findings' codes."""
    actor = record.get("actor") or {}
    return {
        "seq": int(record.get("seq") or 0),
        "recordType": record.get("recordType"),
        "action": record.get("action"),
        "actor": actor.get("principalArn"),
        "quotagov": bool(actor.get("quotagov")),
        "decision": actor.get("decisionAction"),
        "findings": [f.get("code") for f in record.get("findings") or [] if isinstance(f, dict)],
    }
