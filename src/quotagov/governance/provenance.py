"""Proof of sender for the messages and records quotagov's parts hand each other.

Nothing a function receives is trusted for being there: a queue message or a table
item is a claim until its sender is proven. Anyone IAM lets call ``lambda:Invoke``
can hand a consumer a crafted SQS batch, anyone with ``sqs:SendMessage`` a crafted
message, anyone with ``dynamodb:PutItem`` a crafted record. What such a caller cannot
do is compute a MAC under the stack's message key: ``kms:GenerateMac`` on that key is
granted by the key policy to quotagov's sending roles only, and KMS HMAC keys never
leave KMS (https://docs.aws.amazon.com/kms/latest/developerguide/hmac.html).

**Sealed message** (the body of every ``AuditQueue``, ``ApplyQueue``,
``OwnerNoticeQueue`` and ``SubmissionQueue`` message)::

    {"sealed": 1, "purpose": "audit", "sender": "<function name>",
     "sentAt": <epoch seconds>, "body": "<the inner message, JSON text>",
     "mac": "<base64 HMAC_SHA_256>"}

The MAC covers :func:`mac_input`: the purpose (the queue the message is meant for,
so a message moved to another queue fails), the sender (the sending function's
name, set by its code, never by its caller), the time it was sent and the SHA-256 of
the inner body. KMS ``GenerateMac`` takes at most 4096 bytes, hence the digest
(https://docs.aws.amazon.com/kms/latest/APIReference/API_GenerateMac.html). The
consumer takes the sender and the time from the verified envelope (the audit
record's ``queuedBy`` and ``time``), never from the inner body.

**Sealed record** (a table item a later step acts on, e.g. a ``QUEUED`` submission or
an approved escalation): :func:`record_proof` over the purpose, the record's id and
the fields the action depends on, stored on the item; :func:`check_record` before
acting.

One key, one MAC per message, one ``VerifyMac`` per message received: KMS has no
batch MAC call. Why one key for all senders rather than one per sender: every holder
of ``GenerateMac`` is a quotagov function whose code names itself as the sender; a
caller who can only invoke such a function cannot choose what it seals or under which
name. The key policy is the boundary (``template.yaml``, ``MessageKey``).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from quotagov.clock import Clock
from quotagov.governance.canonical import canonical_json
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR, ControllerDecision
from quotagov.governance.ports.messages import MessageMac

#: Format version of sealed messages and record proofs.
SEALED_VERSION = 1
#: Domain separation: a message MAC can never be a record proof or an audit seal.
MESSAGE_DOMAIN = "quotagov-message/v1"
RECORD_DOMAIN = "quotagov-record/v1"

#: Purposes (one per queue, one per kind of sealed record).
AUDIT_QUEUE = "audit"
APPLY_QUEUE = "apply"
NOTICE_QUEUE = "notice"
SUBMISSION_QUEUE = "submission"
QUEUED_SUBMISSION = "queued-submission"
ESCALATION_DECISION = "escalation-decision"

#: Longest sealed message body read (SQS's own limit is 256 KiB).
MAX_MESSAGE_CHARS = 262_144


class UnauthenticatedError(ValueError):
    """A message or record without valid proof of its sender (names the fault)."""


@dataclass(frozen=True)
class Opened:
    """A verified sealed message.

    Attributes:
        sender: the sending function's name (from the proof).
        sent_at: when it was sealed, epoch seconds (from the proof).
        body: the inner message, JSON text.
    """

    sender: str
    sent_at: float
    body: str


def mac_input(purpose: str, sender: str, sent_at: float, body: str) -> bytes:
    """The bytes a message MAC covers (well under KMS's 4096-byte limit)."""
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    return f"{MESSAGE_DOMAIN}\n{purpose}\n{sender}\n{sent_at!r}\n{digest}".encode()


def seal_message(mac: MessageMac, purpose: str, sender: str, sent_at: float, body: str) -> str:
    """The sealed message (JSON text) carrying ``body`` (one ``GenerateMac``).

    Args:
        mac: the message key.
        purpose: the queue it is for (:data:`AUDIT_QUEUE`, ...).
        sender: the sending function's name (``AWS_LAMBDA_FUNCTION_NAME``).
        sent_at: epoch seconds.
        body: the inner message, JSON text.

    Raises:
        botocore.exceptions.ClientError: KMS refused (the caller treats it as the
            queue refusing the message).
    """
    sent_at = float(sent_at)
    envelope = {
        "sealed": SEALED_VERSION,
        "purpose": purpose,
        "sender": sender,
        "sentAt": sent_at,
        "body": body,
        "mac": mac.seal(mac_input(purpose, sender, sent_at, body)),
    }
    return json.dumps(envelope, separators=(",", ":"), sort_keys=True)


def _text(envelope: Mapping[str, Any], key: str) -> str:
    value = envelope.get(key)
    if not isinstance(value, str) or not value:
        raise UnauthenticatedError(f"{key}: must be a non-empty string")
    return value


def claimed_sender(text: str) -> str:
    """The ``sender`` a message claims, for the finding about it ('' when none); never
    a proof."""
    try:
        envelope = json.loads(text[:MAX_MESSAGE_CHARS])
    except ValueError:
        return ""
    sender = envelope.get("sender") if isinstance(envelope, dict) else None
    return sender[:200] if isinstance(sender, str) else ""


def open_message(mac: MessageMac, purpose: str, text: str) -> Opened:
    """Verify a sealed message meant for ``purpose`` (one ``VerifyMac``).

    Raises:
        UnauthenticatedError: not a sealed message (naming the field at fault), sealed
            for another queue, or its MAC does not verify.
        botocore.exceptions.ClientError: KMS could not be asked (throttling, no right):
            the message is not judged, the caller retries it.
    """
    if len(text) > MAX_MESSAGE_CHARS:
        raise UnauthenticatedError(f"(body): longer than {MAX_MESSAGE_CHARS} characters")
    try:
        envelope = json.loads(text)
    except ValueError as exc:
        raise UnauthenticatedError(f"(body): not JSON ({exc})") from exc
    if not isinstance(envelope, dict) or envelope.get("sealed") != SEALED_VERSION:
        raise UnauthenticatedError(f"sealed: must be {SEALED_VERSION} (no proof of sender)")
    got = _text(envelope, "purpose")
    if got != purpose:
        raise UnauthenticatedError(f"purpose: sealed for {got!r}, received on {purpose!r}")
    sender = _text(envelope, "sender")
    sent_at = envelope.get("sentAt")
    if (
        isinstance(sent_at, bool)
        or not isinstance(sent_at, (int, float))
        or not math.isfinite(sent_at)
    ):
        raise UnauthenticatedError("sentAt: must be a number (epoch seconds)")
    body = envelope.get("body")
    if not isinstance(body, str):
        raise UnauthenticatedError("body: must be a string")
    given = _text(envelope, "mac")
    if not mac.check(mac_input(purpose, sender, float(sent_at), body), given):
        raise UnauthenticatedError("mac: does not verify (not sealed by a quotagov sender)")
    return Opened(sender, float(sent_at), body)


def record_input(purpose: str, record_id: str, fields: Mapping[str, Any]) -> bytes:
    """The bytes a record proof covers: purpose, id and the SHA-256 of the canonical
    JSON of ``fields`` (numbers read back from DynamoDB as ``Decimal`` hash alike)."""
    digest = hashlib.sha256(canonical_json(dict(fields)).encode("utf-8")).hexdigest()
    return f"{RECORD_DOMAIN}\n{purpose}\n{record_id}\n{digest}".encode()


def record_proof(
    mac: MessageMac, purpose: str, record_id: str, fields: Mapping[str, Any], sender: str
) -> dict[str, Any]:
    """The proof stored on a record: ``{"v", "sender", "mac"}`` (one ``GenerateMac``).

    ``fields`` are the record's values the later action depends on; ``sender`` is
    covered too (it is added to ``fields``).
    """
    covered = {**dict(fields), "sender": sender}
    return {
        "v": SEALED_VERSION,
        "sender": sender,
        "mac": mac.seal(record_input(purpose, record_id, covered)),
    }


def check_record(
    mac: MessageMac,
    purpose: str,
    record_id: str,
    fields: Mapping[str, Any],
    proof: Any,
) -> str:
    """Verify a record's proof against its current ``fields`` (one ``VerifyMac``).

    Returns:
        The sender the proof names.

    Raises:
        UnauthenticatedError: no proof, a malformed one, or one that does not match
            the fields (a hand-written or edited record).
        botocore.exceptions.ClientError: KMS could not be asked (retry).
    """
    if not isinstance(proof, Mapping):
        raise UnauthenticatedError(f"proof: missing on {purpose} record {record_id!r}")
    sender = _text(proof, "sender")
    given = _text(proof, "mac")
    covered = {**dict(fields), "sender": sender}
    if not mac.check(record_input(purpose, record_id, covered), given):
        raise UnauthenticatedError(
            f"proof: does not verify for {purpose} record {record_id!r} "
            "(written or changed outside quotagov)"
        )
    return sender


#: Reads the sending function's name at send time.
SenderName = Callable[[], str]


class MessageSealer:
    """Seals the bodies one sender puts on one queue (the adapters' ``seal`` hook).

    Args:
        mac: the message key.
        purpose: the queue (:data:`AUDIT_QUEUE`, :data:`APPLY_QUEUE`, ...).
        sender: returns the sending function's name when called.
        clock: stamps ``sentAt``.
    """

    def __init__(self, mac: MessageMac, purpose: str, sender: SenderName, clock: Clock) -> None:
        self._mac = mac
        self._purpose = purpose
        self._sender = sender
        self._clock = clock

    def __call__(self, body: str) -> str:
        """The sealed message carrying ``body`` (see :func:`seal_message`)."""
        return seal_message(self._mac, self._purpose, self._sender(), self._clock.now(), body)


#: The audit action of a refused message or record, and its finding's code.
REFUSED_ACTION = "UnauthenticatedInputRefused"
UNAUTHENTICATED = "UNAUTHENTICATED_INPUT"


def refusal(
    *, job_queue: str, where: str, item_id: str, reason: str, text: str, claimed: str = ""
) -> ControllerDecision:
    """The audit decision recording a refused message or record (one per ``where`` and
    ``item_id``: a redelivered message is recorded once).

    Args:
        job_queue: the governed queue (its audit chain).
        where: the queue or table it came from (a queue ARN, ``JobsTable``, ...).
        item_id: the SQS message id or the record's key.
        reason: the :class:`UnauthenticatedError` text.
        text: the message body or the record as JSON, kept only as its SHA-256 and
            length (the message itself stays parked for inspection).
        claimed: the sender it claims, if any (a claim, recorded as such).
    """
    return ControllerDecision(
        action=REFUSED_ACTION,
        actor=QUOTAGOV_ACTOR,
        job_queue=job_queue,
        resource=where,
        decision_id=f"unauthenticated:{where}:{item_id}",
        details={
            "id": item_id,
            "reason": reason,
            "claimedSender": claimed,
            "bodySha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "bodyChars": len(text),
        },
    )


def refusal_findings(decision: ControllerDecision) -> list[dict[str, str]]:
    """The findings of an audit decision: ``UNAUTHENTICATED_INPUT`` (high) for a
    :func:`refusal`, none for any other decision."""
    if decision.action != REFUSED_ACTION:
        return []
    details = dict(decision.details)
    return [
        {
            "code": UNAUTHENTICATED,
            "severity": "high",
            "message": (
                f"refused {details.get('id')!s} from {decision.resource}: "
                f"{details.get('reason')!s}; claimed sender "
                f"{details.get('claimedSender') or '(none)'}"
            ),
        }
    ]
