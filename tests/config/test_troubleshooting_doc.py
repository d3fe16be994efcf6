"""docs/troubleshooting.md's table of what users tried is what kompi prints today."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kompi_components.__main__ import main
from tests.stacks import REPO

DOC = REPO / "docs" / "troubleshooting.md"
ROW = re.compile(r"^\| `(?P<tried>.+)` \| `(?P<printed>.+)` \|$")


def rows() -> list[tuple[str, str]]:
    text = DOC.read_text()
    table = text[text.index("<!-- tried:start -->") : text.index("<!-- tried:end -->")]
    found = [(match["tried"], match["printed"]) for line in table.splitlines() if (match := ROW.match(line))]
    assert len(found) >= 15
    return found


@pytest.mark.parametrize(("tried", "printed"), rows(), ids=[tried for tried, _ in rows()])
def test_the_documented_line_is_printed(
    tried: str, printed: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(REPO / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "Pulumi.try.yaml").write_text(f"config:\n  {tried}\n")
    assert main(["render", "--stack", "try", "--dir", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"{printed}\n")
