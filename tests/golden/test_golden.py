"""Every stack and named config renders exactly as its checked-in golden file: a change to kompi's objects
shows in review."""

from __future__ import annotations

import difflib

import pytest

from tests.golden import GOLDEN_DIR, REGENERATE, golden_cases, golden_path, rendered


@pytest.mark.parametrize("case", golden_cases())
def test_render_is_the_golden_one(case: str) -> None:
    expected = golden_path(case).read_text() if golden_path(case).exists() else ""
    actual = rendered(case)
    diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), "golden", "render"))
    assert actual == expected, f"the render of {case} changed; if you meant it, run `{REGENERATE}`:\n{diff[:4000]}"


def test_no_golden_file_without_its_case() -> None:
    assert sorted(path.stem for path in GOLDEN_DIR.glob("*.yaml")) == sorted(golden_cases())
