"""A clone of the repository stands on its own: no tracked file names a document outside it.

Every file ``git ls-files`` lists is read (binary files and data tables skipped) and
checked for

(a) citations a reader of the repository cannot follow: the shared folder that sat
    next to the repository, section numbers of the design notes (cite
    ``docs/design.md`` and the section's name), numbers of tracker issues (say what the
    issue was about), and the offline fact sheet (cite the vendor's page);
(b) relative paths that climb out of their directory and, resolved from the file's own
    directory (and, for ``src/``, ``tests/`` and ``benchmarks/``, whose paths are
    written from the repository root, from the root too), land outside the repository.

The patterns are built from pieces so that this file does not match itself.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Files not read: images, archives and data tables (the OpenB trace sample).
BINARY_SUFFIXES = frozenset(
    {".png", ".jpg", ".jpeg", ".gif", ".ico", ".pdf", ".gz", ".zip", ".whl", ".csv"}
)

#: Top-level folders whose files write paths from the repository root.
ROOT_RELATIVE_DIRS = frozenset({"src", "tests", "benchmarks"})

_UP = "." + "./"  # one level up, written so that this file holds no such token
_SECTION = "\u00a7"

#: (what it is, the pattern) of every citation a clone cannot follow.
FORBIDDEN: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("the shared folder beside the repository", re.compile(re.escape(_UP) + "shared")),
    (
        "the shared folder's documents",
        re.compile(r"(?<![\w./-])" + "shared/" + r"(?:spec|scenarios|traces|reference)/"),
    ),
    (
        "a design-notes section number (cite docs/design.md and the section's name)",
        re.compile(r"design\.md`{0,2} " + _SECTION),
    ),
    (
        "a tracker issue number (say what it was about)",
        re.compile(r"\b" + "issue" + r" [0-9]+", re.IGNORECASE),
    ),
    (
        "the offline fact sheet (cite the vendor's page)",
        re.compile("reference " + _SECTION + "|" + "aws-and-slack" + "-facts|reference" + " facts"),
    ),
)

#: A relative path that starts by climbing: not inside a longer path, URL or ``...``.
UP_PATH = re.compile(r"(?<![\w./~-])(?:" + re.escape(_UP) + r")+[\w./-]*")

#: (file, token) pairs that look like such a path but are not one.
NOT_PATHS = frozenset(
    {
        # a hostile string value the property tests feed to the APIs, not a path
        ("tests/support/mutations.py", _UP + ".."),
    }
)


@functools.cache
def tracked_files() -> tuple[str, ...]:
    """The repository's tracked files (paths relative to the root, ``/``-separated)."""
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    return tuple(p for p in out.decode("utf-8").split("\0") if p)


def text_of(path: str) -> str | None:
    """The file's text, or None for a binary file, a data table, a symlink or a gap."""
    file = ROOT / path
    if file.suffix.lower() in BINARY_SUFFIXES or file.is_symlink() or not file.is_file():
        return None
    data = file.read_bytes()
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def citation_offences(path: str, text: str) -> list[str]:
    """``file:line: what: match`` for every forbidden citation in ``text``."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for what, pattern in FORBIDDEN:
            for match in pattern.finditer(line):
                found.append(f"{path}:{number}: {what}: {match.group(0)!r}")
    return found


def _bases(path: str) -> list[str]:
    """The directories a relative path in ``path`` is read from."""
    own = os.path.dirname(os.path.join(str(ROOT), path))
    bases = [own]
    if path.split("/", 1)[0] in ROOT_RELATIVE_DIRS:
        bases.append(str(ROOT))
    return bases


def _inside(resolved: str) -> bool:
    root = str(ROOT)
    return resolved == root or resolved.startswith(root + os.sep)


def path_offences(path: str, text: str) -> list[str]:
    """``file:line: token -> where`` for every climbing path that leaves the repository."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for match in UP_PATH.finditer(line):
            token = match.group(0)
            if (path, token) in NOT_PATHS:
                continue
            for base in _bases(path):
                resolved = os.path.normpath(os.path.join(base, token))
                if not _inside(resolved):
                    where = os.path.relpath(resolved, ROOT)
                    found.append(
                        f"{path}:{number}: {token!r} from {os.path.relpath(base, ROOT)!r} "
                        f"is {where!r}, outside the repository"
                    )
                    break
    return found


def _report(offences: list[str]) -> str:
    return f"{len(offences)} reference(s) outside the repository:\n" + "\n".join(offences)


@functools.cache
def tracked_texts() -> tuple[tuple[str, str], ...]:
    """``(path, text)`` of every tracked text file, read once for all the checks."""
    found = ((path, text_of(path)) for path in tracked_files())
    return tuple((path, text) for path, text in found if text is not None)


@pytest.mark.parametrize(
    "offences_of",
    [citation_offences, path_offences],
    ids=["cites a document outside", "names a relative path outside"],
)
def test_no_tracked_file_points_outside_the_repository(
    offences_of: Callable[[str, str], list[str]],
) -> None:
    offences = [line for path, text in tracked_texts() for line in offences_of(path, text)]
    assert offences == [], _report(offences)


def test_the_files_read_include_code_tests_docs_and_the_readme() -> None:
    read = {path for path, _ in tracked_texts()}
    assert {"README.md", "template.yaml", "Makefile", "pyproject.toml"} <= read
    assert any(p.startswith("docs/") for p in read)
    assert any(p.startswith("src/quotagov/") for p in read)
    assert not any(p.endswith((".png", ".csv")) for p in read)


def test_this_file_does_not_match_itself() -> None:
    here = Path(__file__).resolve()
    text = here.read_text(encoding="utf-8")
    path = here.relative_to(ROOT).as_posix()
    assert citation_offences(path, text) == []
    assert path_offences(path, text) == []


def test_the_citation_patterns_find_what_they_are_for() -> None:
    section = _SECTION
    bad = [
        f"see {_UP}shared" + "/spec/scenario-format.md",
        "as in shared/" + "scenarios/aws-walkthrough.json",
        f"``design.md`` {section}3",
        f"design.md {section}6: people are told",
        "Property (" + "iss" + "ue 17): mutated requests",
        "Issue" + " 14, one writer",
        f"signing (reference {section}7.1)",
        "the " + "aws-and-slack" + "-facts.md sheet",
        "limit (reference" + " facts 1.2)",
    ]
    for line in bad:
        assert citation_offences("x.py", line), line
    good = [
        '``docs/design.md``, "Trust model"',
        '``docs/simulator/spec.md``, "Admission"',
        "examples/traces/README.md",
        "https://github.com/ASFHyP3/hyp3/" + "issues/1676",
        "a tissue sample, reissued twice",
        "the references of a template",
    ]
    for line in good:
        assert citation_offences("x.py", line) == [], line


def test_the_path_check_resolves_from_the_file_and_from_the_root() -> None:
    # from docs/: one level up is the root, two levels up is outside
    assert path_offences("docs/architecture.md", f"see [it]({_UP}README.md)") == []
    assert path_offences("docs/architecture.md", f"see {_UP}{_UP}other/x.md")
    # root-relative trees: checked from the root too
    assert path_offences("tests/whatif/t.py", f'ROOT / "{_UP}shared' + '/traces/a.csv"')
    assert path_offences("src/quotagov/x.py", f"``{_UP}shared" + "/spec/x.md``")
    assert path_offences("tests/whatif/t.py", 'ROOT / "examples/traces/a.csv"') == []
    # not paths: a URL's segment, an ellipsis, a path inside a longer one
    assert path_offences("README.md", f"https://example.org/a/{_UP}b") == []
    assert path_offences("src/x.py", "``.../job-queue/<name>/quota-share/<share>``") == []
    assert path_offences("src/x.py", f"docs/{_UP}README.md") == []
    # the one listed exception
    assert path_offences("tests/support/mutations.py", f'"{_UP}.."') == []
    assert path_offences("tests/support/other.py", f'"{_UP}.."')
