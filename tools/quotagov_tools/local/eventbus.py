"""The template's EventBridge rules, in moto, with each function target fed by a queue.

moto's EventBridge matches events against rule patterns itself but cannot invoke
Lambda functions in-process. For every rule that targets a function this module
creates the rule with the template's resolved pattern and gives it an SQS target
(``quotagov-local-rule-<rule>``); :meth:`LocalEventBus.take` drains those queues and
returns ``(function logical id, envelope)`` pairs for the runtime to invoke, in
the order the events were put. The envelope is the one EventBridge delivers
(``version``, ``id``, ``detail-type``, ``source``, ``account``, ``time``, ``region``,
``resources``, ``detail``); moto's extra ``ingestion-time`` member is removed and the
``account`` its default target input leaves out is put back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import boto3

from quotagov_tools.local.stack import ACCOUNT_ID, REGION, RuleTrigger


@dataclass(frozen=True)
class _Target:
    rule: RuleTrigger
    queue_url: str


class LocalEventBus:
    """Puts events on a moto event bus and collects what the template's rules route.

    Args:
        rules: the rules that target functions (from :meth:`Stack.rule_triggers`).
        bus_name: the bus AWS service events arrive on (``default``).
    """

    def __init__(self, rules: list[RuleTrigger], bus_name: str = "default") -> None:
        self._events = boto3.client("events", region_name=REGION)
        self._sqs = boto3.client("sqs", region_name=REGION)
        self.bus_name = bus_name
        self._targets: list[_Target] = []
        self._sequence = 0
        for rule in rules:
            self._events.put_rule(
                Name=rule.name,
                EventPattern=json.dumps(rule.pattern),
                State="ENABLED",
                EventBusName=bus_name,
            )
            queue_name = f"quotagov-local-rule-{rule.name}"[:80]
            url = self._sqs.create_queue(QueueName=queue_name)["QueueUrl"]
            self._events.put_targets(
                Rule=rule.name,
                EventBusName=bus_name,
                Targets=[
                    {"Id": rule.function, "Arn": f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:{queue_name}"}
                ],
            )
            self._targets.append(_Target(rule=rule, queue_url=url))

    def put(self, envelope: dict[str, Any]) -> None:
        """Put one event (an EventBridge envelope as a service would emit it) on the bus.

        Raises:
            ValueError: when EventBridge refuses the entry (names the error code).
        """
        entry: dict[str, Any] = {
            "Source": envelope["source"],
            "DetailType": envelope["detail-type"],
            "Detail": json.dumps(envelope["detail"]),
            "Resources": list(envelope.get("resources") or []),
            "EventBusName": self.bus_name,
        }
        if envelope.get("time"):
            entry["Time"] = datetime.strptime(envelope["time"], "%Y-%m-%dT%H:%M:%SZ").replace(
                tzinfo=UTC
            )
        result = self._events.put_events(Entries=[entry])  # type: ignore[list-item]
        failed = [e for e in result["Entries"] if e.get("ErrorCode")]
        if failed:
            raise ValueError(
                f"PutEvents: {failed[0]['ErrorCode']}: {failed[0].get('ErrorMessage')}"
            )

    def take(self) -> list[tuple[str, dict[str, Any]]]:
        """Remove and return every routed event as ``(function logical id, envelope)``."""
        delivered: list[tuple[str, dict[str, Any]]] = []
        for target in self._targets:
            while True:
                messages = self._sqs.receive_message(
                    QueueUrl=target.queue_url, MaxNumberOfMessages=10
                ).get("Messages", [])
                if not messages:
                    break
                for message in messages:
                    envelope = json.loads(message["Body"])
                    envelope.pop("ingestion-time", None)
                    envelope.setdefault("account", ACCOUNT_ID)  # moto's target input omits it
                    delivered.append((target.rule.function, envelope))
                    self._sqs.delete_message(
                        QueueUrl=target.queue_url, ReceiptHandle=message["ReceiptHandle"]
                    )
        return delivered
