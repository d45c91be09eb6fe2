"""The one kind of message the submission queue carries, and everything else.

* ``{"submissionId": "<id>"}``: a submission the API stored ``QUEUED``. The worker
  takes who submitted it, for which team and what, from that stored record, never from
  the message (``docs/design.md``, "Trust model": identity comes from API Gateway's authorizer).

Anything else is unusable and refused: a whole submission put straight on the queue
(with or without a ``principal`` message attribute: anyone who can send to the queue
can write any attribute, so it proves nothing), a body that is not JSON, nested too
deeply for the decoder (``RecursionError``), or not an object. :func:`parse_message`
says why. The queue policy lets only the API's role send, so such a message means
someone got around it; it is recorded and audited, never submitted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

#: Message attribute a direct sender may set to claim a caller; recorded as a claim only.
PRINCIPAL_ATTRIBUTE = "principal"

#: The fault of a whole submission put on the queue instead of ``POST /jobs``.
DIRECT_SUBMISSION_FAULT = (
    "(body): not a reference to a stored submission; the submission queue takes only "
    '{"submissionId": ...} messages from the API (submit with POST /jobs)'
)

#: The fault of a body nested deeper than the JSON decoder can recurse.
TOO_DEEP_FAULT = "(body): nested too deeply to decode"


@dataclass(frozen=True)
class ParsedMessage:
    """One submission-queue message, understood.

    Exactly one of ``submission_id`` (a queued reference) or ``faults`` (refused) is set.

    Attributes:
        claimed_principal: the ``principal`` message attribute, if any: what the sender
            claims, never used as the caller ("" when absent).
        fields: the body's string members (``team``, ``workloadClass``, ...) kept on
            the REFUSED record of an unusable message, for the investigation.
    """

    submission_id: str | None = None
    claimed_principal: str = ""
    faults: list[str] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)


def parse_message(body: str, attributes: dict[str, Any]) -> ParsedMessage:
    """Parse a message ``body`` and its SQS ``messageAttributes`` (Lambda event shape).

    Never raises: an unusable body comes back with ``faults`` set, one
    ``"<field path>: <fault>"`` each.
    """
    claimed = _principal(attributes)
    try:
        data = json.loads(body)
    except RecursionError:
        return ParsedMessage(claimed_principal=claimed, faults=[TOO_DEEP_FAULT])
    except ValueError as exc:
        return ParsedMessage(claimed_principal=claimed, faults=[f"(body): not valid JSON: {exc}"])
    if not isinstance(data, dict):
        return ParsedMessage(
            claimed_principal=claimed, faults=["(body): a message must be a JSON object"]
        )
    if set(data) == {"submissionId"}:
        sid = data["submissionId"]
        if isinstance(sid, str) and sid:
            return ParsedMessage(submission_id=sid, claimed_principal=claimed)
        return ParsedMessage(
            claimed_principal=claimed, faults=["submissionId: must be a non-empty string"]
        )
    kept = {
        k: v
        for k, v in data.items()
        if k in ("team", "workloadClass", "priorityLevel", "jobName") and isinstance(v, str)
    }
    return ParsedMessage(claimed_principal=claimed, faults=[DIRECT_SUBMISSION_FAULT], fields=kept)


def _principal(attributes: dict[str, Any]) -> str:
    attribute = attributes.get(PRINCIPAL_ATTRIBUTE) or {}
    value = attribute.get("stringValue") or attribute.get("StringValue") or ""
    return str(value)
