"""The README's links lead somewhere in this repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation out, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_relative_link_and_anchor_exists() -> None:
    anchors = {_anchor(h) for h in re.findall(r"^#+ (.+)$", README, flags=re.MULTILINE)}
    for target in re.findall(r"\]\(([^)\s]+)\)", README):
        if target.startswith(("http://", "https://")):
            continue
        if target.startswith("#"):
            assert target[1:] in anchors, target
        else:
            assert (ROOT / target).exists(), target


def test_no_citation_of_a_file_outside_the_repository() -> None:
    # a new user's finding: "design.md, 'Trust model'" named a file they did not have;
    # the design notes are in the repository now, cited by their path docs/design.md
    assert re.search(r"(?<![\w/])design\.md", README) is None
