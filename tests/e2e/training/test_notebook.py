"""examples/notebook.ipynb, run top to bottom in a Python kernel (nbclient) against the local cluster's real
node, as a data scientist runs it: the preparation Job fills the data volume, training reads it, the result and
the checkpoint come back, and destroy removes the cluster."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from kompi_engine import paths
from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl, wait_until
from tests.e2e.node.volumes import host_volume

REPO = Path(__file__).resolve().parents[3]
NOTEBOOK = REPO / "examples" / "notebook.ipynb"
VOLUMES = ("data", "checkpoints")


def test_the_notebook_prepares_trains_reads_the_result_back_and_destroys(
    training_cluster: LocalCluster,
    training_kubectl: Kubectl,
    training_image: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    storage_class = f"kompi-notebook-{os.getpid()}"
    volumes = [f"{storage_class}-{name}" for name in VOLUMES]
    for volume in volumes:
        host_volume(training_kubectl, tmp_path / volume, volume, storage_class)
    repository, tag = training_image.rsplit(":", 1)
    # the kernel inherits this process's environment: the settings the notebook reads, the engine's Pulumi CLI,
    # kubectl and providers on PATH, kompi importable by the Python that runs its dynamic providers
    monkeypatch.setenv("KUBECONFIG", str(training_cluster.kubeconfig))
    monkeypatch.setenv("KOMPI_IMAGE", repository)
    monkeypatch.setenv("KOMPI_IMAGE_TAG", tag)
    monkeypatch.setenv("KOMPI_STORAGE_CLASS", storage_class)
    monkeypatch.setenv("KOMPI_NOTEBOOK_STATE", str(tmp_path / "state"))
    monkeypatch.setenv(
        "PATH", os.pathsep.join([str(training_cluster.bin), str(paths.plugins_dir()), os.environ["PATH"]])
    )
    monkeypatch.setenv("KOMPI_PYTHON", sys.executable)
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setenv("PULUMI_SKIP_UPDATE_CHECK", "true")
    monkeypatch.setenv("PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION", "true")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    try:
        NotebookClient(
            notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
        ).execute()
    finally:
        for volume in volumes:
            training_kubectl.run("delete", "pv", volume, "--wait=false", check=False)

    printed = "".join(
        output.get("text", "") for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
    )
    print(printed[-3000:])
    accuracy = re.search(r"^test accuracy ([\d.]+) after 12 epochs on 2 ranks$", printed, re.MULTILINE)
    assert accuracy is not None and float(accuracy[1]) >= 0.9, printed
    # the preparation Job's file is what training read, and the checkpoint came back to the notebook's machine
    # (either claim may have bound either volume: both are of one class and size)
    directories = [tmp_path / volume for volume in volumes]
    (data,) = [directory for directory in directories if (directory / "digits.npz").exists()]
    (checkpoints,) = [directory for directory in directories if (directory / "digits" / "checkpoint.pt").exists()]
    assert data != checkpoints
    assert (tmp_path / "state" / "checkpoint.pt").read_bytes() == (
        checkpoints / "digits" / "checkpoint.pt"
    ).read_bytes()
    wait_until("the namespace gone", lambda: training_kubectl.get("namespace", "kompi-notebook", None) is None, 120)
