"""``docs/architecture.md`` is checked against the code and the template.

Every name the page writes in backticks is looked up: a path (``governance/jobs/``,
``handlers/api_errors.py``) must exist under the repository, ``src/quotagov`` or
``tools/quotagov_tools``; a dotted name under ``quotagov`` or ``quotagov_tools`` must
import (a module, or an attribute of one); a template logical id (``JobsTable``,
``AuditQueue``, ``SlackInteractionsFunction``) must be a resource of ``template.yaml``;
an environment variable or code constant (``JOBS_TABLE``) must appear in the template
or the code. A page that names a queue the template lacks, or a module that moved,
fails here.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"
#: Where a path on the page may start: the repository, the two packages, and the
#: directories the page's sections are about (benchmarks, the use cases, the scheduler).
BASES = (
    ROOT,
    ROOT / "src",
    ROOT / "src" / "quotagov",
    ROOT / "tools" / "quotagov_tools",
    ROOT / "src" / "quotagov" / "governance",
    ROOT / "src" / "quotagov" / "scheduler",
    ROOT / "benchmarks",
)
#: Suffixes of the template's logical ids.
LOGICAL_ID = re.compile(
    r"^[A-Z][A-Za-z0-9]*(Function|Queue|DLQ|Table|Key|Bucket|Rule|Alarm|Api|Secret"
    r"|Parameter|Role|Topic|Layer|Schedule|Dashboard|Pool|Policy)$"
)
#: Names on the page that look like logical ids but are classes of a library.
LIBRARY_NAMES = {
    "DynamoDBPersistenceLayer": "Powertools' idempotency store",
    "TrainingQueue": "the SageMaker Python SDK's AWS Batch queue",
}
CONSTANT = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")
DOTTED = re.compile(r"^quotagov(_tools)?(\.[A-Za-z_][A-Za-z0-9_]*)+$")


def _spans() -> list[str]:
    text = PAGE.read_text()
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks are pictures
    return sorted(set(re.findall(r"`([^`\n]+)`", text)))


def _path_exists(token: str) -> bool:
    """A file or directory, or ``module.attribute`` with the attribute defined there."""
    name = token.rstrip("/")
    if any((base / name).exists() or (base / f"{name}.py").exists() for base in BASES):
        return True
    module, _, attribute = name.rpartition(".")
    defined = re.compile(rf"^(def |class )?{re.escape(attribute)}\b", re.M)
    return bool(module) and any(
        (base / f"{module}.py").is_file() and defined.search((base / f"{module}.py").read_text())
        for base in BASES
    )


def _imports(token: str) -> bool:
    parts = token.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def _corpus() -> str:
    texts = [(ROOT / "template.yaml").read_text()]
    for base in (ROOT / "src", ROOT / "tools"):
        texts.extend(path.read_text() for path in base.rglob("*.py"))
    return "\n".join(texts)


def _resources() -> set[str]:
    from quotagov_tools.deploy.template import load_template

    return set(load_template(ROOT / "template.yaml")["Resources"])


def _kind(token: str) -> str | None:
    if " " in token or any(c in token for c in "{}<>*:=()[],'\"") or token.startswith(("/", "-")):
        return None
    if token.startswith("index/"):  # a table's index, not a path
        return None
    if DOTTED.match(token):
        return "dotted"
    if "/" in token or token.endswith((".py", ".md", ".yaml", ".json", ".toml")):
        return "path"
    if LOGICAL_ID.match(token):
        return "resource"
    if CONSTANT.match(token):
        return "constant"
    return None


def test_the_page_names_things_of_every_kind() -> None:
    """The check has something to check (a page with no names would pass vacuously)."""
    kinds = {_kind(token) for token in _spans()}
    assert {"dotted", "path", "resource", "constant"} <= kinds


@pytest.mark.parametrize("kind", ["dotted", "path", "resource", "constant"])
def test_every_name_on_the_page_exists(kind: str) -> None:
    tokens = [token for token in _spans() if _kind(token) == kind]
    if kind == "dotted":
        missing = [token for token in tokens if not _imports(token)]
    elif kind == "path":
        missing = [token for token in tokens if not _path_exists(token)]
    elif kind == "resource":
        resources = _resources()
        corpus = _corpus()
        template_text = (ROOT / "template.yaml").read_text()
        missing = [
            token
            for token in tokens
            if token not in resources
            # the role SAM makes for a function: <LogicalId>Role
            and not (token.endswith("Role") and token.removesuffix("Role") in resources)
            # a class of the code or its libraries named like a resource (a port)
            and not re.search(rf"^class {token}\b", corpus, re.M)
            and token not in LIBRARY_NAMES
            # an API operation the template's rules match (``PutParameter``)
            and not re.search(rf"eventName: \[[^\]]*\b{token}\b", template_text)
        ]
    else:
        corpus = _corpus()
        missing = [token for token in tokens if token not in corpus]
    assert missing == []
