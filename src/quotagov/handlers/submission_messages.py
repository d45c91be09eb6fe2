"""The two kinds of message on the submission queue, told apart by their body.

* ``{"submissionId": "<id>"}``: a submission the API stored ``QUEUED``;
* a whole submission (the ``POST /jobs`` body, see
  :mod:`quotagov.governance.submission_request`) sent straight to the queue; the caller
  is the ``principal`` message attribute (String), set by the sending role, never the body.

Anything else is unusable: :func:`parse_message` says why, field by field. That
includes a body nested too deeply for the JSON decoder (``RecursionError``): it is a
poison message like any other malformed one, never an exception that would send it
round the queue to the DLQ.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from quotagov.governance.submission_request import SubmissionRequest, schema_faults
from quotagov.handlers.submission_checks import submission_faults

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


#: The fault of a body nested deeper than the JSON decoder (or validation) can recurse.
TOO_DEEP_FAULT = "(body): nested too deeply to decode"


def parse_message(body: str, attributes: dict[str, Any]) -> ParsedMessage:
    """Parse a message ``body`` and its SQS ``messageAttributes`` (Lambda event shape).

    Never raises: an unusable body (not JSON, nested too deeply, not an object, a
    schema fault, a fault of :func:`~quotagov.handlers.submission_checks.submission_faults`)
    comes back with ``faults`` set, one ``"<field path>: <fault>"`` each.
    """
    principal = _principal(attributes)
    try:
        data = json.loads(body)
    except RecursionError:
        return ParsedMessage(principal=principal, faults=[TOO_DEEP_FAULT])
    except ValueError as exc:
        return ParsedMessage(principal=principal, faults=[f"(body): not valid JSON: {exc}"])
    if not isinstance(data, dict):
        return ParsedMessage(
            principal=principal, faults=["(body): a submission must be a JSON object"]
        )
    if set(data) == {"submissionId"}:
        sid = data["submissionId"]
        if isinstance(sid, str) and sid:
            return ParsedMessage(submission_id=sid)
        return ParsedMessage(faults=["submissionId: must be a non-empty string"])
    kept = {
        k: v
        for k, v in data.items()
        if k in ("team", "workloadClass", "priorityLevel", "jobName") and isinstance(v, str)
    }
    try:
        request = SubmissionRequest.model_validate(data)
    except ValidationError as exc:
        return ParsedMessage(principal=principal, faults=schema_faults(exc.errors()), fields=kept)
    except RecursionError:
        return ParsedMessage(principal=principal, faults=[TOO_DEEP_FAULT], fields=kept)
    checked = submission_faults(request)
    if checked:
        faults = [f"{path}: {fault}" for path, fault in checked]
        return ParsedMessage(principal=principal, faults=faults, fields=kept)
    return ParsedMessage(request=request, principal=principal, fields=kept)


def _principal(attributes: dict[str, Any]) -> str:
    attribute = attributes.get(PRINCIPAL_ATTRIBUTE) or {}
    value = attribute.get("stringValue") or attribute.get("StringValue") or ""
    return str(value)
