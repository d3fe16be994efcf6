"""Every stack and named config renders exactly as its checked-in golden file, and registers exactly the
Pulumi resources of its golden list: a change to kompi's objects or to their options shows in review."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from tests.golden import (
    GOLDEN_DIR,
    REGENERATE,
    RESOURCES_DIR,
    golden_cases,
    golden_path,
    registered,
    rendered,
    resources_path,
)


def _same(expected_path: Path, actual: str, what: str) -> None:
    expected = expected_path.read_text() if expected_path.exists() else ""
    diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), "golden", "now"))
    assert actual == expected, f"{what} changed; if you meant it, run `{REGENERATE}`:\n{diff[:4000]}"


@pytest.mark.parametrize("case", golden_cases())
def test_render_is_the_golden_one(case: str) -> None:
    _same(golden_path(case), rendered(case), f"the render of {case}")


@pytest.mark.parametrize("case", golden_cases())
def test_registered_resources_are_the_golden_ones(case: str) -> None:
    _same(resources_path(case), registered(case), f"the resources registered for {case}")


def test_no_golden_file_without_its_case() -> None:
    cases = sorted(golden_cases())
    assert sorted(path.stem for path in GOLDEN_DIR.glob("*.yaml")) == cases
    assert sorted(path.stem for path in RESOURCES_DIR.glob("*.yaml")) == cases
