"""The README's links lead somewhere in this repository, and the README stays a guide.

Links inside docs/ are checked by the site's strict build (`make docs`: mkdocs'
validation of links and anchors); the README is not part of the site, so it is checked
here.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
#: a relative path that climbs one folder up (spelled in two pieces so that this file
#: does not hold one itself)
PARENT = ".." + "/"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation out, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(markdown: str) -> set[str]:
    """The anchors of every heading of ``markdown`` (code fences left out)."""
    outside_fences = re.sub(r"^```.*?^```", "", markdown, flags=re.MULTILINE | re.DOTALL)
    headings = re.findall(r"^#+ (.+)$", outside_fences, flags=re.MULTILINE)
    return {_anchor(h) for h in headings}


def _relative_links(markdown: str) -> list[str]:
    return [t for t in LINK.findall(markdown) if not t.startswith(("http://", "https://"))]


def test_every_relative_link_and_anchor_exists() -> None:
    anchors = _anchors(README)
    for target in _relative_links(README):
        if target.startswith("#"):
            assert target[1:] in anchors, target
        else:
            path, _, fragment = target.partition("#")
            assert (ROOT / path).exists(), target
            if fragment:
                assert path.endswith(".md"), target
                assert fragment in _anchors((ROOT / path).read_text()), target


def test_every_relative_link_resolves_to_a_file_of_the_repository() -> None:
    # not a folder, and not outside the checkout (a path climbing above the root would
    # name a sibling folder)
    for target in _relative_links(README):
        path = target.partition("#")[0]
        if not path:
            continue
        resolved = (ROOT / path).resolve()
        assert resolved.is_file(), target
        assert resolved.is_relative_to(ROOT), target


def test_no_citation_of_a_file_outside_the_repository() -> None:
    # a new user's finding: "design.md, 'Trust model'" named a file they did not have;
    # the design notes are in the repository now, cited by their path docs/design.md
    assert re.search(r"(?<![\w/])design\.md", README) is None
    assert PARENT not in README


def test_the_readme_is_a_guide_of_at_most_300_lines() -> None:
    # the reference lives on the docs site; the README says what, why, and where to go
    assert len(README.splitlines()) <= 300


def test_the_readme_links_each_persons_guide() -> None:
    links = set(_relative_links(README))
    for person in ("researcher", "approver", "platform-admin", "operator"):
        assert f"docs/guides/{person}.md" in links, person
