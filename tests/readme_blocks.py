"""The README's code blocks, found by the section they are in, for the tests that run them verbatim."""

from __future__ import annotations

import re

from tests.stacks import REPO

README = (REPO / "README.md").read_text()
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else len(README)]


def blocks(title: str, language: str | None = None) -> list[str]:
    """The code blocks of section ``title`` (of ``language``, e.g. "sh", "python"; "" for plain ones)."""
    return [text for lang, text in _BLOCK.findall(section(title)) if language is None or lang == language]
