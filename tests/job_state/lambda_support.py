"""SQS wrapping and EMF/log capture for handler tests (the Lambda context is
``support.lambda_context``)."""

from __future__ import annotations

import json
from typing import Any


def sqs_batch(bodies: list[Any]) -> dict[str, Any]:
    """An SQS event whose records carry ``bodies`` (dicts are JSON-encoded)."""
    return {
        "Records": [
            {
                "messageId": f"msg-{i}",
                "receiptHandle": f"rh-{i}",
                "body": body if isinstance(body, str) else json.dumps(body),
                "attributes": {
                    "ApproximateReceiveCount": "1",
                    "SentTimestamp": "1777885000000",
                    "SenderId": "AIDAEXAMPLE",
                    "ApproximateFirstReceiveTimestamp": "1777885000001",
                },
                "messageAttributes": {},
                "md5OfBody": "0",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:eu-west-1:111122223333:job-state-events",
                "awsRegion": "eu-west-1",
            }
            for i, body in enumerate(bodies)
        ]
    }


def json_lines(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def emf_metrics(text: str) -> list[tuple[str, float, dict[str, str]]]:
    """(metric name, value, dimensions) for every EMF blob in captured stdout."""
    found = []
    for blob in json_lines(text):
        meta = blob.get("_aws")
        if not meta:
            continue
        for directive in meta["CloudWatchMetrics"]:
            dims = {d: blob[d] for group in directive["Dimensions"] for d in group}
            for metric in directive["Metrics"]:
                value = blob[metric["Name"]]
                values = value if isinstance(value, list) else [value]
                for v in values:
                    found.append((metric["Name"], float(v), dims))
    return found
