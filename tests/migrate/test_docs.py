"""docs/ stays true to the code: the error lines shown are the CLI's, every kube-openmpi key is mapped."""

from __future__ import annotations

import re
from pathlib import Path

from kompi_components.migrate.keys import KUBE_OPENMPI_KEYS, leaf_paths
from tests.migrate.helpers import Kompi, write_values
from tests.stacks import REPO

DOCS = REPO / "docs"


def error_line(text: str, start: str) -> str:
    (line,) = [line for line in text.splitlines() if line.startswith(start)]
    return line


def test_troubleshooting_shows_the_exact_read_write_once_errors(kompi: Kompi, project: Path) -> None:
    page = (DOCS / "troubleshooting.md").read_text()
    (project / "Pulumi.rwo.yaml").write_text(
        "config:\n  kompi:workers: 2\n  kompi:sharedClaims:\n"
        "    - {claimName: datasets, accessMode: ReadWriteOnce, mountPath: /data}\n"
    )
    rendered = kompi("render", "--stack", "rwo", "--dir", project)
    assert rendered.code == 2
    assert error_line(page, "error: invalid config kompi:sharedClaims[0]") == rendered.err.strip()
    claim = {"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}}
    pod = {"volumes": [claim], "volumeMounts": [{"name": "data", "mountPath": "/data"}]}
    path = write_values(project, {"mpiMaster": pod, "mpiWorkers": {"num": 2, **pod}})
    imported = kompi("import-values", path, "--stack", "rwo2", "--dir", project)
    assert imported.code == 2
    assert error_line(page, "error: invalid config kompi:workerPod.volumes[0]") == imported.err_lines[-1]


def test_the_migration_table_names_every_key_kube_openmpi_reads() -> None:
    table = (DOCS / "migration.md").read_text().split("## Key mapping", 1)[1]
    cells = set(re.findall(r"`([^`]+)`", table))
    for path in leaf_paths(KUBE_OPENMPI_KEYS):
        parts = path.split(".")
        section_wildcards = {".".join(parts[:i]) + ".*" for i in range(1, len(parts))}
        both = re.sub(r"^mpi(Master|Workers)\.", "mpiMaster/mpiWorkers.", path)
        named = {path, both}
        children = {cell for cell in cells if cell.startswith((f"{path}.", f"{both}."))}
        listed = named & cells or children or section_wildcards & cells or parts[-1] in cells
        assert listed, f"docs/migration.md's key table does not mention {path}"


def test_the_migration_page_shows_the_commands() -> None:
    page = (DOCS / "migration.md").read_text()
    for text in (
        "pulumi up --stack NAME",
        "pulumi destroy --stack NAME",
        "render --stack NAME",
        "gen-ssh-key.sh",
        "CLUSTER-master-0 -c mpi -- mpiexec -n 4",
        "import-values",
    ):
        assert text in page  # fmt: skip
