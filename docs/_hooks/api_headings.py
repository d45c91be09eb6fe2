"""mkdocs hook: the generated API reference sits under the API page's "Reference"
heading.

The OpenAPI plugin (neoteroi.mkdocsoad) writes the document's title as a level-1
heading; on docs/api.md that would be a second page title. This hook runs after the
plugins and moves every heading of the generated part (after the marker comment) down
two levels, so the reference nests under the page's level-2 "Reference" heading.
"""

from __future__ import annotations

import re
from typing import Any

MARKER = "<!-- generated API reference -->"
HEADING = re.compile(r"^(#{1,4}) ", flags=re.MULTILINE)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Demote the headings after :data:`MARKER` on the page that has it."""
    if MARKER not in markdown:
        return markdown
    head, generated = markdown.split(MARKER, 1)
    return head + MARKER + HEADING.sub(lambda m: "##" + m.group(1) + " ", generated)
