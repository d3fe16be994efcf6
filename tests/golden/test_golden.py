"""Every stack renders exactly as its checked-in golden file: a change to kompi's objects shows in review."""

from __future__ import annotations

import difflib

import pytest

from tests.golden import GOLDEN_DIR, REGENERATE, golden_path, rendered
from tests.stacks import stack_names


@pytest.mark.parametrize("stack", stack_names())
def test_render_is_the_golden_one(stack: str) -> None:
    expected = golden_path(stack).read_text() if golden_path(stack).exists() else ""
    actual = rendered(stack)
    diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), "golden", "render"))
    assert actual == expected, f"the render of {stack} changed; if you meant it, run `{REGENERATE}`:\n{diff[:4000]}"


def test_no_golden_file_without_its_stack() -> None:
    assert sorted(path.stem for path in GOLDEN_DIR.glob("*.yaml")) == stack_names()
