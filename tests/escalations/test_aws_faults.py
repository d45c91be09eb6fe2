"""Retryable AWS faults on the escalation store: lost answers, transaction conflicts, 503s.

The faults are injected where botocore meets moto (``before-send`` hooks on the
client), so the adapter's own code and botocore's retries run unchanged.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from quotagov.adapters.aws_clients import AwsFault, classify, retryable
from quotagov.adapters.dynamodb_escalations import CONFLICT_ATTEMPTS, EscalationsTable
from quotagov.governance.model.escalation import EscalationStatus
from quotagov.handlers.api_errors import aws_fault_response
from quotagov_tools.local.faults import refusal

from .test_escalations_e2e import REASON, audit_actions, message_text
from .test_escalations_table import T0, escalation
from .world import World

BUDGET = "budget#research#0"


class LoseAnswers:
    """After moto carried out ``operation``, raise ``ReadTimeoutError`` ``times`` times."""

    def __init__(self, operation: str, times: int = 1) -> None:
        self.operation = operation
        self.left = times
        self.sent = 0

    def __call__(self, request: Any, event_name: str, **_: Any) -> None:
        if not event_name.endswith("." + self.operation):
            return
        self.sent += 1
        if self.left:
            self.left -= 1
            raise ReadTimeoutError(endpoint_url=request.url)


class Conflicts:
    """Answer ``TransactWriteItems`` with a ``TransactionConflict`` cancellation
    ``times`` times instead of carrying it out."""

    def __init__(self, times: int) -> None:
        self.left = times
        self.answered = 0

    def __call__(self, request: Any, event_name: str, **_: Any) -> Any:
        if not event_name.endswith(".TransactWriteItems") or not self.left:
            return None
        self.left -= 1
        self.answered += 1
        count = len(json.loads(request.body)["TransactItems"])
        return refusal(
            request,
            400,
            {
                "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
                "message": "Transaction cancelled [TransactionConflict]",
                "CancellationReasons": [{"Code": "TransactionConflict"}] * count,
            },
        )


def _raw_item(table: EscalationsTable, pk: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = table.client.get_item(
        TableName=table.table_name, Key={"pk": {"S": pk}}, ConsistentRead=True
    ).get("Item")
    return found


def test_an_approve_whose_answer_was_lost_is_applied_as_our_own_write(
    escalations_table: EscalationsTable,
) -> None:
    escalations_table.create_pending(escalation("esc-1"), budget_key=BUDGET, budget_limit=3)
    lose = LoseAnswers("UpdateItem")
    escalations_table.client.meta.events.register_last("before-send", lose)
    decided = escalations_table.transition_if_status(
        "esc-1",
        EscalationStatus.PENDING,
        {"status": EscalationStatus.APPROVED, "decided_by": "U0ERIN", "decided_at": T0 + 60},
    )
    assert lose.sent == 2  # the write, then botocore's retry of it (condition failed)
    assert decided is not None  # recognised as ours, not "already APPROVED"
    assert (decided.status, decided.decided_by, decided.decided_at) == (
        EscalationStatus.APPROVED,
        "U0ERIN",
        T0 + 60,
    )
    item = _raw_item(escalations_table, "esc-1")
    assert item is not None
    assert item["status"] == {"S": "APPROVED"}
    assert item["decidedBy"] == {"S": "U0ERIN"}
    assert item["decidedAt"] == {"N": "1764547260.0"}


def test_a_move_made_by_someone_else_is_not_taken_for_ours(
    escalations_table: EscalationsTable,
) -> None:
    escalations_table.create_pending(escalation("esc-1"), budget_key=BUDGET, budget_limit=3)
    changes = {"status": EscalationStatus.APPROVED, "decided_at": T0 + 60}
    first = escalations_table.transition_if_status(
        "esc-1", EscalationStatus.PENDING, changes | {"decided_by": "U0ERIN"}
    )
    assert first is not None
    second = escalations_table.transition_if_status(
        "esc-1", EscalationStatus.PENDING, changes | {"decided_by": "U0FRANK"}
    )
    assert second is None
    stored = escalations_table.get("esc-1")
    assert stored is not None and stored.decided_by == "U0ERIN"


def test_a_stored_request_whose_answer_was_lost_is_stored_once_and_takes_one_unit(
    escalations_table: EscalationsTable,
) -> None:
    lose = LoseAnswers("TransactWriteItems")
    escalations_table.client.meta.events.register_last("before-send", lose)
    request = escalation("esc-1")
    escalations_table.create_pending(request, budget_key=BUDGET, budget_limit=3)
    assert lose.sent == 2
    assert escalations_table.get("esc-1") == request
    assert escalations_table.budget_used(BUDGET) == 1
    assert _raw_item(escalations_table, "open#sub-for-esc-1") == {
        "pk": {"S": "open#sub-for-esc-1"},
        "escalationId": {"S": "esc-1"},
        "createdAt": {"N": repr(float(T0))},
    }


def test_a_transaction_conflict_is_tried_again(escalations_table: EscalationsTable) -> None:
    conflicts = Conflicts(times=CONFLICT_ATTEMPTS - 1)
    escalations_table.client.meta.events.register_first("before-send", conflicts)
    request = escalation("esc-1")
    escalations_table.create_pending(request, budget_key=BUDGET, budget_limit=3)
    assert conflicts.answered == CONFLICT_ATTEMPTS - 1
    assert escalations_table.get("esc-1") == request
    assert escalations_table.budget_used(BUDGET) == 1


def test_a_conflict_that_lasts_is_a_retryable_fault_and_changes_nothing(
    escalations_table: EscalationsTable,
) -> None:
    conflicts = Conflicts(times=CONFLICT_ATTEMPTS)
    escalations_table.client.meta.events.register_first("before-send", conflicts)
    with pytest.raises(ClientError) as raised:
        escalations_table.create_pending(escalation("esc-1"), budget_key=BUDGET, budget_limit=3)
    assert classify(raised.value) is AwsFault.CONFLICT
    assert retryable(raised.value)
    assert escalations_table.get("esc-1") is None
    assert escalations_table.budget_used(BUDGET) == 0
    assert _raw_item(escalations_table, "open#sub-for-esc-1") is None
    answer = aws_fault_response(raised.value)
    assert answer.status_code == 503
    assert json.loads(str(answer.body)) == {
        "message": "TransactWriteItems is busy (TransactionCanceledException, conflict); "
        "nothing was changed: retry the same request",
        "retryable": True,
    }


def _client_error(code: str, status: int, **extra: Any) -> ClientError:
    answer: Any = {
        "Error": {"Code": code, "Message": "m"},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }
    answer.update(extra)
    return ClientError(answer, "PutItem")


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (_client_error("ProvisionedThroughputExceededException", 400), AwsFault.THROTTLING),
        (_client_error("TooManyRequestsException", 429), AwsFault.THROTTLING),
        (_client_error("TransactionConflictException", 400), AwsFault.CONFLICT),
        (
            _client_error(
                "TransactionCanceledException",
                400,
                CancellationReasons=[{"Code": "None"}, {"Code": "ConditionalCheckFailed"}],
            ),
            AwsFault.CONDITION,
        ),
        (_client_error("ConditionalCheckFailedException", 400), AwsFault.CONDITION),
        (_client_error("InternalServerError", 500), AwsFault.SERVER),
        (_client_error("AccessDeniedException", 400), AwsFault.CLIENT),
        (ReadTimeoutError(endpoint_url="http://127.0.0.1"), AwsFault.LOST_RESPONSE),
    ],
)
def test_one_classification_of_aws_faults(error: Exception, kind: AwsFault) -> None:
    assert classify(error) is kind


def test_a_fault_that_is_not_retryable_stays_an_error() -> None:
    denied = _client_error("AccessDeniedException", 400)
    with pytest.raises(ClientError):
        aws_fault_response(denied)


class LoseDecisionAnswer:
    """Carry out the first ``UpdateItem`` moving an escalation PENDING -> APPROVED over
    HTTP, then raise ``ReadTimeoutError`` as if its answer never came (a loopback moto
    server: botocore sends after the ``before-send`` handlers, so the handler sends)."""

    def __init__(self) -> None:
        self.lost = 0

    def __call__(self, request: Any, event_name: str, **_: Any) -> None:
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode()
        moving = b'"PENDING"' in body and b'"APPROVED"' in body
        if not event_name.endswith(".UpdateItem") or not moving or self.lost:
            return
        from botocore.httpsession import URLLib3Session

        URLLib3Session().send(request)  # DynamoDB carries the write out...
        self.lost += 1
        raise ReadTimeoutError(endpoint_url=request.url)  # ...and its answer is lost


def test_a_click_whose_approval_answer_was_lost_is_applied_not_called_already_decided(
    world: World,
) -> None:
    status, body = world.request("sub-bg-2", "high", REASON)
    assert status == 201
    escalation_id = body["escalationId"]
    lose = LoseDecisionAnswer()
    world.escalations.client.meta.events.register_last("before-send", lose)
    assert world.click(escalation_id, "U0ERIN") == 200
    assert lose.lost == 1
    stored = world.escalations.get(escalation_id)
    assert stored is not None
    assert (stored.status, stored.decided_by) == (EscalationStatus.APPLIED, "U0ERIN")
    assert world.update_calls == [{"jobId": world.job_ids["bg-2"], "schedulingPriority": 50}]
    assert world.describe("bg-2")["schedulingPriority"] == 50
    assert audit_actions(world) == [
        "EscalationRequested",
        "EscalationApproved",
        "EscalationApplied",
    ]
    notices = [c.params.get("text", "") for c in world.slack.calls_to("response_url")]
    assert not any("already" in text for text in notices), notices
    message = world.slack.messages[0]
    assert "*Approved* by <@U0ERIN>" in message_text(message.blocks)


def test_a_transaction_conflict_storing_a_request_answers_503_and_stores_nothing(
    world: World,
) -> None:
    conflicts = Conflicts(times=CONFLICT_ATTEMPTS)
    world.escalations.client.meta.events.register_first("before-send", conflicts)
    status, body = world.request("sub-bg-2", "high", REASON)
    assert conflicts.answered == CONFLICT_ATTEMPTS
    assert (status, body) == (
        503,
        {
            "message": "TransactWriteItems is busy (TransactionCanceledException, conflict); "
            "nothing was changed: retry the same request",
            "retryable": True,
        },
    )
    scan = world.escalations.client.scan(TableName=world.escalations.table_name)
    assert scan["Items"] == []  # no request, no budget unit, no job lock
    assert world.slack.messages == []
    assert audit_actions(world) == []
    # the same request, once the conflict is over, is stored with the job's lock
    status, body = world.request("sub-bg-2", "high", REASON)
    assert status == 201
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None and stored.status is EscalationStatus.PENDING
    assert world.escalations.open_escalation_id("sub-bg-2") == body["escalationId"]
