"""The submission's input check beyond its pydantic schema: one step, before the policy.

``POST /jobs`` and the submit worker (a whole submission put on the queue) run
:func:`submission_faults` on every request their schema accepted, before routing it with
the policy. A fault here means the request can never run as sent, so it is refused as
an input fault (400 with ``{path, fault}`` per fault; a FAILED record for a queue
message) and nothing is stored or queued.

Checks, in order (each fault's path is from the body root,
``serviceRequestPayload.ResourceConfig.InstanceCount``):

1. the ``CreateTrainingJob`` request against botocore's SageMaker model
   (:func:`quotagov.adapters.sagemaker_model.training_request_faults`);
2. the rules the model does not carry
   (:func:`quotagov.governance.submission.request.training_rule_faults`).

Further refusals that need no policy (e.g. a job larger than the service environment)
belong here as a further step.
"""

from __future__ import annotations

from quotagov.governance.errors import InvalidRequestError
from quotagov.governance.submission.request import SubmissionRequest, training_rule_faults

#: The body member holding the training request.
PAYLOAD = "serviceRequestPayload"


def submission_faults(request: SubmissionRequest) -> list[tuple[str, str]]:
    """Every ``(path, fault)`` of ``request``'s training request (empty: it may go on).

    The checked payload is the one that would be sent (``to_json``), so what passes here
    is exactly what Batch receives.
    """
    from quotagov.adapters.sagemaker_model import training_request_faults

    payload = request.serviceRequestPayload
    found = training_request_faults(payload.model_dump(mode="json", exclude_unset=True))
    found += training_rule_faults(payload)
    seen: set[tuple[str, str]] = set()
    faults = []
    for path, fault in found:
        item = (f"{PAYLOAD}.{path}" if path != "(payload)" else PAYLOAD, fault)
        if item not in seen:
            seen.add(item)
            faults.append(item)
    return faults


def check_submission(request: SubmissionRequest) -> None:
    """Raise when :func:`submission_faults` finds any.

    Raises:
        InvalidRequestError: ``faults`` lists every ``(path, fault)``; the message says
            how many.
    """
    faults = submission_faults(request)
    if faults:
        raise InvalidRequestError(
            f"the training request has {len(faults)} fault(s) SageMaker would refuse", faults
        )
