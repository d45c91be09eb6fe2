"""The installable package: its extras, what the wheel carries, ``--version``.

- :mod:`quotagov_tools.extras` is the one table of which command needs which extra; it must
  name extras ``pyproject.toml`` declares, and a command whose extra is missing stops
  at once (exit 2, one line on stderr naming the extra) without doing any work. The
  missing extra is simulated in a subprocess by a ``sitecustomize`` that puts ``None``
  in ``sys.modules`` for the blocked modules (Python then refuses to import them).
- The wheel (``pip wheel --no-build-isolation``, offline, from a copy of the checkout)
  carries ``template.yaml`` and the examples and no tests, and the demo runs from the
  unpacked wheel in an empty directory.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest

from quotagov_tools.cli import main
from quotagov_tools.extras import (
    COMMAND_EXTRAS,
    LOCAL,
    PLOT,
    missing_extra,
    missing_modules,
    refusal,
)

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXAMPLES = ROOT / "src" / "quotagov" / "examples"
#: The console script of the environment running the tests.
QUOTAGOV = Path(sys.executable).parent / "quotagov"
BLOCKER = textwrap.dedent(
    """\
    import os
    import sys

    for name in os.environ["QUOTAGOV_TEST_BLOCK"].split(","):
        sys.modules[name] = None
    """
)


# -- the table ---------------------------------------------------------------------


def test_the_table_names_the_extras_pyproject_declares() -> None:
    extras = PROJECT["optional-dependencies"]
    assert {name: extra.name for name, extra in COMMAND_EXTRAS.items()} == {
        "demo": "local",
        "serve": "local",
        "invoke": "local",
        "whatif": "plot",
    }
    assert [r.split("[")[0] for r in extras["local"]] == ["moto"]
    assert extras["plot"] == ["matplotlib>=3.8"]
    # dev brings every extra, so the suite runs every command and builds the docs
    assert "quotagov[local,plot,docs,sagemaker,distributed]" in extras["dev"]
    assert extras["sagemaker"] == ["sagemaker-train>=1.27,<2"]
    assert extras["distributed"] == ["dask[distributed]>=2024.1"]
    # every module of the table is installed here (the dev extras)
    assert missing_modules(LOCAL.modules + PLOT.modules) == []


def test_the_base_dependencies_bring_no_extra_module() -> None:
    names = {d.split("[")[0].split(">")[0].split("=")[0].lower() for d in PROJECT["dependencies"]}
    assert "moto" not in names and "matplotlib" not in names


def test_missing_modules_sees_a_blocked_and_an_absent_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "moto", None)
    assert missing_modules(["json", "moto", "quotagov_no_such_module"]) == [
        "moto",
        "quotagov_no_such_module",
    ]
    assert missing_extra("demo") is LOCAL
    assert missing_extra("whatif") is None  # matplotlib is there
    assert missing_extra("policy") is None  # needs no extra


def test_refusal_names_the_command_the_extra_and_the_missing_modules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert refusal("whatif", PLOT) == (
        "quotagov whatif needs the 'plot' extra (matplotlib is not installed): "
        "pip install 'quotagov[plot]'"
    )
    monkeypatch.setitem(sys.modules, "moto", None)
    monkeypatch.setitem(sys.modules, "jsonpath_ng", None)
    assert refusal("serve", LOCAL) == (
        "quotagov serve needs the 'local' extra (moto, jsonpath_ng are not installed): "
        "pip install 'quotagov[local]'"
    )


def test_main_refuses_before_the_command_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "report"
    code = main(
        ["whatif", str(EXAMPLES / "aws-walkthrough.json"), "--policy",
         f"today={EXAMPLES / 'policy.yaml'}", "--out", str(out), "--workers", "1"]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert captured.err == (
        "quotagov whatif needs the 'plot' extra (matplotlib is not installed): "
        "pip install 'quotagov[plot]'\n"
    )
    assert not out.exists()


# -- a missing extra, for real: a subprocess that cannot import it -----------------


def _run_blocked(
    args: list[str], blocked: str, cwd: Path, tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    site = tmp_path / "blocker"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCKER)
    env = {**os.environ, "PYTHONPATH": str(site), "QUOTAGOV_TEST_BLOCK": blocked}
    return subprocess.run(
        [str(QUOTAGOV), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "extra", "module"),
    [
        (["demo"], "local", "moto"),
        (["demo", "--json"], "local", "jsonpath_ng"),
        (["serve", "--port", "0"], "local", "moto"),
        (["invoke", "JobsApiFunction", "--event", str(ROOT / "events/jobs_api-get.json")],
         "local", "moto"),
    ],
)  # fmt: skip
def test_a_local_command_without_its_extra_exits_2_with_one_line(
    command: list[str], extra: str, module: str, tmp_path: Path
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    done = _run_blocked(command, module, cwd, tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""  # no story, no server banner, no handler result
    assert done.stderr == (
        f"quotagov {command[0]} needs the '{extra}' extra ({module} is not installed): "
        f"pip install 'quotagov[{extra}]'\n"
    )
    assert list(cwd.iterdir()) == []


@pytest.mark.slow
def test_whatif_without_matplotlib_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = _run_blocked(
        ["whatif", str(EXAMPLES / "aws-walkthrough.json"),
         "--map", "background=research:exploratory", "--map", "medium=applied:scheduled",
         "--map", "reserved=release:release",
         "--policy", f"today={EXAMPLES / 'policy.yaml'}", "--out", str(out), "--workers", "1"],
        "matplotlib",
        tmp_path,
        tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stdout == ""  # no table: the workload was not simulated
    assert done.stderr == (
        "quotagov whatif needs the 'plot' extra (matplotlib is not installed): "
        "pip install 'quotagov[plot]'\n"
    )
    assert not out.exists()


@pytest.mark.slow
def test_without_both_extras_help_version_and_base_commands_work(tmp_path: Path) -> None:
    blocked = "moto,matplotlib"
    help_text = _run_blocked(["--help"], blocked, tmp_path, tmp_path)
    assert help_text.returncode == 0, help_text.stderr
    assert "--version" in help_text.stdout and "demo" in help_text.stdout
    for command in ("demo", "whatif"):
        sub = _run_blocked([command, "--help"], blocked, tmp_path, tmp_path)
        assert sub.returncode == 0, sub.stderr
        assert sub.stdout.startswith(f"usage: quotagov {command} ")
    validate = _run_blocked(
        ["policy", "validate", str(EXAMPLES / "policy.yaml")], blocked, tmp_path, tmp_path
    )
    assert validate.returncode == 0, validate.stderr
    assert "Traceback" not in validate.stderr


@pytest.mark.slow
def test_building_the_parser_imports_neither_moto_nor_matplotlib() -> None:
    probe = (
        "import sys; from quotagov_tools.cli import build_parser; build_parser(); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'moto', 'matplotlib'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == "[]\n"


# -- --version -----------------------------------------------------------------------


@pytest.mark.slow
def test_version_prints_the_installed_version(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(QUOTAGOV), "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert done.stdout == f"quotagov {PROJECT['version']}\n"
    assert importlib.metadata.version("quotagov") == PROJECT["version"]


def test_version_from_main(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"quotagov {PROJECT['version']}\n"


# -- the wheel ---------------------------------------------------------------------

#: Left out of the copy the wheel is built from: what is not the project's source.
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", ".sam-venv", ".aws-sam", "build", "dist", "*.egg-info", "__pycache__",
    ".*_cache", ".hypothesis", "out", "whatif-out",
)  # fmt: skip


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built offline from a copy of the checkout (so no stale ``build/``)."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE, symlinks=True)
    env = {**os.environ, "PIP_NO_INDEX": "1"}
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps",
         "--no-build-isolation", "-q", "-w", str(base / "dist")],
        check=True, env=env, capture_output=True, timeout=300,
    )  # fmt: skip
    [built] = (base / "dist").glob("*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_carries_the_template_and_the_examples_and_no_tests(wheel: Path) -> None:
    assert wheel.name == f"quotagov-{PROJECT['version']}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert (
            archive.read("quotagov_tools/_bundled/template.yaml")
            == (ROOT / "template.yaml").read_bytes()
        )
        for example in EXAMPLES.iterdir():
            if example.suffix in (".yaml", ".json"):
                assert archive.read(f"quotagov/examples/{example.name}") == example.read_bytes()
        metadata = archive.read(f"quotagov-{PROJECT['version']}.dist-info/METADATA").decode()
    assert {
        "quotagov_tools/local/runtime.py",
        "quotagov_tools/extras.py",
        "quotagov/py.typed",
    } <= names
    assert "quotagov/adapters/sagemaker_create_training_job.json" in names
    tops = {name.split("/")[0] for name in names}
    assert tops == {"quotagov", "quotagov_tools", f"quotagov-{PROJECT['version']}.dist-info"}
    assert not [n for n in names if "tests/" in n or "conftest" in n or "/test_" in n]
    for extra in ("local", "plot", "dev"):
        assert f"Provides-Extra: {extra}\n" in metadata


@pytest.mark.slow
def test_the_demo_runs_from_the_unpacked_wheel_in_an_empty_directory(
    wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    empty = tmp_path / "empty"
    empty.mkdir()
    # the package comes from the unpacked wheel (PYTHONPATH is ahead of the editable
    # install's path), the template from quotagov_tools/_bundled/: no checkout is in reach
    run = (
        "import sys, quotagov, quotagov_tools.local.stack as stack; "
        "assert quotagov.__file__.startswith(sys.argv[1]), quotagov.__file__; "
        "assert stack.__file__.startswith(sys.argv[1]), stack.__file__; "
        "assert stack.default_template_path() == stack.BUNDLED_TEMPLATE; "
        "from quotagov_tools.cli import main; sys.exit(main(sys.argv[2:]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", run, str(site), "demo", "--json"],
        cwd=empty,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    document = json.loads(done.stdout)
    assert document["failures"] == []
    assert sorted(s["jobName"] for s in document["submissions"] if s["state"] == "REFUSED") == [
        "nightly-eval"
    ]
    assert list(empty.iterdir()) == []


@pytest.mark.slow
def test_the_installed_demo_runs_in_an_empty_directory(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(QUOTAGOV), "demo"], cwd=tmp_path, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1].endswith("; 0 failed checks")
    assert list(tmp_path.iterdir()) == []
