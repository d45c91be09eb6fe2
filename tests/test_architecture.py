"""The packages' shape, checked: no import cycle, and the layers point one way.

``docs/design.md``, "Shape": handlers and local -> governance -> policy, scheduler and ports;
adapters implement the ports. Two packages: :mod:`quotagov` (``src/``, the Lambda runtime
the template's ``CodeUri`` ships) and :mod:`quotagov_tools` (``tools/``: CLI, local
runtime, simulated Batch, what-if, deploy checks), which imports the runtime and never
the other way. Imports are read from the source with :mod:`ast`,
function-level imports included, so a cycle hidden inside a function counts too.
Imports under ``if TYPE_CHECKING:`` are left out of the cycle check (they are never
executed: annotations only), but not out of the layer checks.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: source root -> its top-level package
ROOTS = {ROOT / "src": "quotagov", ROOT / "tools": "quotagov_tools"}
#: Packages of pure rules and use cases, and what they may never import.
PURE = (
    "quotagov.governance",
    "quotagov.policy",
    "quotagov.scheduler",
    "quotagov.batch_semantics",
    "quotagov.batch_shapes",
    "quotagov_tools.whatif",
    "quotagov.durations",
)
FORBIDDEN = (
    "quotagov.wiring",
    "quotagov.adapters",
    "quotagov.handlers",
    "quotagov_tools.local",
    "quotagov_tools.commands",
    "boto3",
    "botocore",
)


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(root, p): p
        for root, package in ROOTS.items()
        for p in sorted((root / package).rglob("*.py"))
    }


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """ids of the import nodes inside ``if TYPE_CHECKING:`` blocks."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                found.update(id(n) for n in ast.walk(child))
    return found


def _imports(name: str, path: Path, known: set[str], *, typing_only: bool = True) -> Iterator[str]:
    """Every module ``name`` imports anywhere in its body (resolved to known modules).

    With ``typing_only=False``, imports under ``if TYPE_CHECKING:`` are skipped.
    """
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(), str(path))
    skip = set() if typing_only else _type_checking_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            yield module
            for alias in node.names:  # ``from pkg import module``
                if f"{module}.{alias.name}" in known:
                    yield f"{module}.{alias.name}"


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph[name] = {
            m for m in _imports(name, path, known, typing_only=False) if m in known and m != name
        }
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _is_package_init_edge(importer: str, imported: str) -> bool:
    """A package's ``__init__`` re-exporting its own submodules is not a cycle of concerns."""
    return imported.startswith(importer + ".") or importer.startswith(imported + ".")


def test_no_import_cycle_between_modules() -> None:
    graph = _graph()
    trimmed = {
        name: {m for m in deps if not _is_package_init_edge(name, m)}
        for name, deps in graph.items()
    }
    assert _cycles(trimmed) == []


@pytest.mark.parametrize("layer", PURE)
def test_pure_layers_import_no_adapter_handler_wiring_or_aws_sdk(layer: str) -> None:
    known = set(_modules())
    offenders = []
    for name, path in _modules().items():
        if name != layer and not name.startswith(layer + "."):
            continue
        for module in _imports(name, path, known):
            if any(module == f or module.startswith(f + ".") for f in FORBIDDEN):
                offenders.append(f"{name} imports {module}")
    assert offenders == []


def test_adapters_import_ports_and_records_never_a_use_case() -> None:
    """Adapters may use the governance ports, record types and pure helpers only."""
    allowed = (
        "quotagov.governance.ports",
        "quotagov.governance.model",
        "quotagov.governance.canonical",
        "quotagov.governance.errors",
    )
    known = set(_modules())
    offenders = []
    for name, path in _modules().items():
        if not name.startswith("quotagov.adapters"):
            continue
        for module in _imports(name, path, known):
            if module.startswith("quotagov.governance") and not any(
                module == a or module.startswith(a + ".") for a in allowed
            ):
                offenders.append(f"{name} imports {module}")
    assert offenders == []


def test_the_runtime_never_imports_a_tool() -> None:
    """Nothing in ``src/quotagov`` (what Lambda runs) imports :mod:`quotagov_tools`."""
    known = set(_modules())
    offenders = [
        f"{name} imports {module}"
        for name, path in _modules().items()
        if name.split(".")[0] == "quotagov"
        for module in _imports(name, path, known)
        if module.split(".")[0] == "quotagov_tools"
    ]
    assert offenders == []


#: The modules allowed at the root of ``quotagov.governance``: rules and shapes shared by
#: several use cases, each with the reason it is not in a use case's package.
GOVERNANCE_ROOT = {
    "access": "who may see and act on a submission, read by every API use case",
    "canonical": "canonical JSON shared by the audit chain and the hand-off messages",
    "errors": "the errors every use case raises",
    "apply_messages": "the apply queue's messages, shared by their senders and the apply function",
    "lease": "the lease rule used by submission, escalations and dispositions",
    "owners": "who owns a job and how to reach them, for every notifying use case",
    "provenance": "the proof of sender (KMS MAC) every use case puts on and checks in messages",
    "pacing": "the SubmitServiceJob pacing shared by the worker and the dispositions",
    "routing": "the policy's routing rule, shared by submission, dispositions and what-if",
}


def test_the_governance_root_holds_shared_rules_only() -> None:
    """A use case's modules live in its package (submission, escalations, jobs, ...)."""
    root = ROOT / "src" / "quotagov" / "governance"
    modules = {path.stem for path in root.glob("*.py") if path.stem != "__init__"}
    assert modules - set(GOVERNANCE_ROOT) == set()


def _code_uris() -> set[Path]:
    from quotagov_tools.deploy.template import load_template

    template = load_template(ROOT / "template.yaml")
    default = template.get("Globals", {}).get("Function", {}).get("CodeUri")
    uris = set()
    for resource in template["Resources"].values():
        if resource.get("Type") == "AWS::Serverless::Function":
            uris.add(ROOT / str(resource.get("Properties", {}).get("CodeUri", default)))
    return uris


def test_no_function_package_holds_a_tool_module() -> None:
    """The directory each function ships (its ``CodeUri``), and what ``sam build`` made of
    it when a build is present (``make test`` runs ``make lint-template`` first), hold no
    ``local``, ``whatif``, ``commands``, ``deploy`` or ``simbatch`` module."""
    from quotagov_tools.deploy.package import tool_modules

    uris = _code_uris()
    assert uris == {ROOT / "src"}
    found = {str(uri): tool_modules(uri) for uri in uris}
    build = ROOT / ".aws-sam" / "build"
    if build.is_dir():
        for function in build.iterdir():
            if (function / "quotagov").is_dir():
                found[str(function)] = tool_modules(function)
    assert {where: modules for where, modules in found.items() if modules} == {}


def test_the_package_check_finds_a_tool_module(tmp_path: Path) -> None:
    """The check itself: a function directory with a stray tool module is caught."""
    from quotagov_tools.deploy.package import main, tool_modules

    function = tmp_path / "build" / "JobsApiFunction"
    (function / "quotagov" / "local").mkdir(parents=True)
    (function / "quotagov" / "handlers").mkdir(parents=True)
    (function / "quotagov" / "handlers" / "jobs_api.py").write_text("")
    (function / "quotagov" / "local" / "runtime.py").write_text("")
    # (joined, so that a rename of the tool package never rewrites the expectation)
    assert tool_modules(function) == [".".join(["quotagov", "local", "runtime"])]
    assert main([str(tmp_path / "build")]) == 1
    (function / "quotagov" / "local" / "runtime.py").unlink()
    assert main([str(tmp_path / "build")]) == 0
    assert main([str(tmp_path / "empty")]) == 2
