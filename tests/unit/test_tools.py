"""The suite uses the project's install only: a tool found elsewhere on PATH (or nowhere) fails here."""

from __future__ import annotations

import pytest

from tests.tools import PIP_TOOLS, VENV_BIN, project_tool


@pytest.mark.parametrize("tool", PIP_TOOLS)
def test_pip_installed_tool_resolves_to_the_venv(tool: str) -> None:
    assert project_tool(tool) == str(VENV_BIN / tool)
