"""The same HTTP request as API Gateway HTTP API (payload 2.0) and Lambda function URL
events, built from a REST (v1) proxy event (AWS: "Working with AWS Lambda proxy
integrations for HTTP APIs", payload format 2.0; "Lambda function URLs", request
payload). Header names are lower-cased and repeated values joined with commas.
"""

from __future__ import annotations

from typing import Any


def _v2(event: dict[str, Any], domain: str, api_id: str) -> dict[str, Any]:
    headers = {name.lower(): value for name, value in (event.get("headers") or {}).items()}
    headers["host"] = domain
    method = event.get("httpMethod", "POST")
    path = event.get("path", "/")
    return {
        "version": "2.0",
        "routeKey": f"{method} {path}" if api_id != "$default-url" else "$default",
        "rawPath": path,
        "rawQueryString": "",
        "headers": headers,
        "requestContext": {
            "accountId": "111122223333",
            "apiId": api_id,
            "domainName": domain,
            "domainPrefix": domain.split(".")[0],
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "192.0.2.10",
                "userAgent": headers.get("user-agent", ""),
            },
            "requestId": "f1b2c3d4-0000-4000-8000-00000000000a",
            "routeKey": f"{method} {path}",
            "stage": "$default",
            "time": "01/Dec/2025:00:15:05 +0000",
            "timeEpoch": 1764548105000,
        },
        "body": event.get("body"),
        "isBase64Encoded": bool(event.get("isBase64Encoded")),
    }


def http_api_v2_event(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` (REST v1) as an HTTP API payload 2.0 event."""
    return _v2(event, "abcdef1234.execute-api.eu-west-1.amazonaws.com", "abcdef1234")


def function_url_event(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` (REST v1) as a Lambda function URL event (payload 2.0, ``lambda-url``)."""
    url = _v2(event, "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6.lambda-url.eu-west-1.on.aws", "$default-url")
    url["routeKey"] = "$default"
    url["requestContext"]["apiId"] = "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6"
    url["requestContext"]["routeKey"] = "$default"
    return url
