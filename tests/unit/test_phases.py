"""CI's phase table: rows from bash (bin/phases.sh) and Python (kompi_engine.build.phases), printed in start order."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kompi_engine.build import phases

PHASES_SH = Path(__file__).resolve().parents[2] / "bin" / "phases.sh"


def _bash(script: str, rows: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"set -euo pipefail; source {PHASES_SH}; {script}"],
        env={"PATH": "/usr/bin:/bin", "KOMPI_PHASES": str(rows)},
        capture_output=True,
        text=True,
        check=False,
    )


def test_rows_from_bash_and_python_print_in_start_order_with_failures_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = tmp_path / "phases.tsv"
    monkeypatch.setenv("KOMPI_PHASES", str(rows))
    phases.record("engine: etcd", 1_000_130, "compiling 200 s, waiting for the compiler 100 s", 1_000_500)
    result = _bash(
        "phase_record apt 1000000 1000014 '3 packages installed'; "
        "timed 'tests without e2e' bash -c 'exit 3' || echo \"status $?\"; phase_table 1000000",
        rows,
    )

    assert result.returncode == 0, result.stderr
    assert "status 3" in result.stdout  # timed hands the command's status back
    output = result.stdout.splitlines()
    table = output[next(i for i, line in enumerate(output) if line.startswith("Where the minutes went")) :]
    names = [line[2:36].strip() for line in table[2:]]
    assert names[:2] == ["apt", "engine: etcd"]  # by start, not by when the row was written
    assert any("apt" in line and "0:00" in line and "0:14" in line and "3 packages" in line for line in table)
    assert any("engine: etcd" in line and "2:10" in line and "6:10" in line for line in table)
    assert any(line.strip().startswith("tests without e2e") and "exit 3" in line for line in table)
    assert table[-1].split()[0] == "all"


def test_without_a_file_nothing_is_recorded_or_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KOMPI_PHASES", raising=False)
    phases.record("engine: etcd", 1.0)
    result = subprocess.run(
        ["bash", "-c", f"source {PHASES_SH}; timed x true; phase_record y 1 2; phase_table 0"],
        env={"PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []
