"""The two kinds of message on the submission queue, told apart by their body.

* ``{"submissionId": "<id>"}``: a submission the API stored ``QUEUED``;
* a whole submission (the ``POST /jobs`` body, see
  :mod:`quotagov.governance.submission_request`) sent straight to the queue; the caller
  is the ``principal`` message attribute (String), set by the sending role, never the body.

Anything else is unusable: :func:`parse_message` says why, field by field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from quotagov.governance.submission_request import SubmissionRequest, schema_faults

#: Message attribute naming the caller of a direct submission.
PRINCIPAL_ATTRIBUTE = "principal"


@dataclass(frozen=True)
class ParsedMessage:
    """One submission-queue message, understood.

    Exactly one of ``submission_id`` (a queued reference), ``request`` (a direct
    submission) or ``faults`` (unusable) is set.

    Attributes:
        principal: the direct submission's caller ("" when absent).
        fields: the body's string members (``team``, ``workloadClass``, ...) kept on
            the FAILED record of an unusable message.
    """

    submission_id: str | None = None
    request: SubmissionRequest | None = None
    principal: str = ""
    faults: list[str] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)


def parse_message(body: str, attributes: dict[str, Any]) -> ParsedMessage:
    """Parse a message ``body`` and its SQS ``messageAttributes`` (Lambda event shape)."""
    try:
        data = json.loads(body)
    except ValueError as exc:
        return ParsedMessage(faults=[f"(body): not valid JSON: {exc}"])
    if not isinstance(data, dict):
        return ParsedMessage(faults=["(body): a submission must be a JSON object"])
    if set(data) == {"submissionId"}:
        sid = data["submissionId"]
        if isinstance(sid, str) and sid:
            return ParsedMessage(submission_id=sid)
        return ParsedMessage(faults=["submissionId: must be a non-empty string"])
    principal = _principal(attributes)
    kept = {
        k: v
        for k, v in data.items()
        if k in ("team", "workloadClass", "priorityLevel", "jobName") and isinstance(v, str)
    }
    try:
        request = SubmissionRequest.model_validate(data)
    except ValidationError as exc:
        return ParsedMessage(principal=principal, faults=schema_faults(exc.errors()), fields=kept)
    return ParsedMessage(request=request, principal=principal, fields=kept)


def _principal(attributes: dict[str, Any]) -> str:
    attribute = attributes.get(PRINCIPAL_ATTRIBUTE) or {}
    value = attribute.get("stringValue") or attribute.get("StringValue") or ""
    return str(value)
