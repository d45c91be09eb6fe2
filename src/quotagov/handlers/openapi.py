"""The OpenAPI 3.1 document of quotagov's REST APIs, generated from the resolvers.

:func:`openapi_document` asks each function's Powertools resolver (:data:`RESOLVERS`:
the jobs API, the escalations API, the Slack interactions endpoint) for its OpenAPI
schema (routes, request models, the ``responses`` every route declares through
:mod:`quotagov.handlers.api_contract`) and merges them into one document, then:

- removes what Powertools adds but the API never answers: the 422
  ``HTTPValidationError`` of request validation (quotagov answers 400 with
  ``{path, fault}`` faults, :mod:`quotagov.handlers.api_errors`) and the default
  ``200 "Successful Response"`` string where a route declares its own success;
- adds the IAM security scheme (SigV4-signed requests, as API Gateway's ``AWS_IAM``
  authorizer documents it: ``x-amazon-apigateway-authtype: awsSigv4``) to every
  operation except the Slack endpoint, which Slack's signature protects instead.

``docs/openapi.json`` is this document (``python -m quotagov.handlers.openapi --write``
writes it; ``tests/contract/test_openapi.py`` fails when it drifts and validates it as
OpenAPI 3.1); ``quotagov serve`` serves it at ``GET /openapi.json``.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

#: Modules whose ``app`` is a resolver of a deployed function, in document order.
RESOLVERS = (
    "quotagov.handlers.jobs_api",
    "quotagov.handlers.escalations_api",
    "quotagov.handlers.slack_interactions",
)
#: Operations not behind the IAM authorizer (Slack signs its requests instead).
UNAUTHENTICATED_OPERATIONS = frozenset({"slackInteractions"})
#: The security scheme of the IAM-authorized routes.
SIGV4_SCHEME = {
    "type": "apiKey",
    "name": "Authorization",
    "in": "header",
    "description": "AWS Signature Version 4 (API Gateway AWS_IAM authorization): sign the "
    "request with the caller's IAM credentials for service execute-api; the caller is "
    "the signing principal, never a body field",
    "x-amazon-apigateway-authtype": "awsSigv4",
}
#: Powertools' own validation schemas, never answered by quotagov.
POWERTOOLS_ONLY = ("HTTPValidationError", "ValidationError", "ResponseValidationError")
DESCRIPTION = (
    "Governance on top of AWS Batch quota management. Every error answer is "
    '`{"message": str, ...}`; input faults (400, and 415 for a body that is not JSON) '
    'add `"faults": [{"path", "fault"}, ...]`, every fault with its field path.'
)
#: Where the document is kept in the repository.
DOCUMENT_PATH = Path("docs/openapi.json")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("quotagov")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0"


def _uses(document: Any, name: str) -> bool:
    return f'"#/components/schemas/{name}"' in json.dumps(document)


def openapi_document() -> dict[str, Any]:
    """The merged, corrected OpenAPI 3.1 document (see the module docstring)."""
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    base: dict[str, Any] = {}
    for name in RESOLVERS:
        app = importlib.import_module(name).app
        part = json.loads(
            app.get_openapi_json_schema(title="quotagov", version=_version(), summary=None)
        )
        base = base or part
        for path, operations in part.get("paths", {}).items():
            paths.setdefault(path, {}).update(operations)
        schemas.update(part.get("components", {}).get("schemas", {}))
    for operations in paths.values():
        for operation in operations.values():
            _correct(operation)
    document: dict[str, Any] = {
        "openapi": base["openapi"],
        "info": {"title": "quotagov", "version": _version(), "description": DESCRIPTION},
        "servers": base.get("servers", [{"url": "/"}]),
        "paths": dict(sorted(paths.items())),
        "components": {"securitySchemes": {"sigv4": SIGV4_SCHEME}},
    }
    removed = True
    while removed:  # one may be used only by another (ValidationError by HTTPValidationError)
        removed = False
        for name in POWERTOOLS_ONLY:
            others = {k: v for k, v in schemas.items() if k != name}
            if name in schemas and not _uses({"paths": document["paths"], **others}, name):
                del schemas[name]
                removed = True
    document["components"]["schemas"] = dict(sorted(schemas.items()))
    return document


def _correct(operation: dict[str, Any]) -> None:
    answers = operation.get("responses", {})
    for status in list(answers):
        ref = json.dumps(answers[status])
        if '"#/components/schemas/HTTPValidationError"' in ref:
            del answers[status]
    declared_success = any(s.startswith("2") and s != "200" for s in answers)
    default = answers.get("200", {}).get("description") == "Successful Response"
    if default and declared_success:
        del answers["200"]
    operation["responses"] = dict(sorted(answers.items()))
    if operation.get("operationId") not in UNAUTHENTICATED_OPERATIONS:
        operation["security"] = [{"sigv4": []}]


def document_text() -> str:
    """:func:`openapi_document` as ``docs/openapi.json`` holds it (2-space indent)."""
    return json.dumps(openapi_document(), indent=2, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the document, or with ``--write`` write ``docs/openapi.json``."""
    args = sys.argv[1:] if argv is None else argv
    text = document_text()
    if "--write" in args:
        DOCUMENT_PATH.write_text(text, encoding="utf-8")
        print(f"wrote {DOCUMENT_PATH}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
