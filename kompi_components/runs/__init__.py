"""Runs on a kompi cluster from a notebook, a script or a terminal (``kompi run``), through the image's
``kompi-run`` in the master pod, reached over the Kubernetes API's exec: no kubectl needed.

    from kompi_components.runs import RunClient
    runs = RunClient.from_outputs(stack.outputs(), kubeconfig="~/.kube/config")
    runs.start(["python3", "train.py"], name="digits", ranks=4, env={"SEED": "1"}, restarts=3)
    for text in runs.follow("digits"):
        print(text, end="")
    runs.wait("digits", timeout=3600)          # RunFailed: exit code and last lines; RunTimeout
    result = json.loads(runs.read_file("/checkpoints/digits/result.json"))

A run goes on when the process that started it ends (a closed notebook kernel, a dropped connection).
"""

from typing import TYPE_CHECKING

from kompi_components.runs.errors import (
    BadRequest,
    ClusterUnreachable,
    KompiRunRefused,
    RemoteFileError,
    RunFailed,
    RunsError,
    RunTimeout,
)
from kompi_components.runs.status import RunState, RunStatus

if TYPE_CHECKING:
    from kompi_components.runs.client import RunClient


def __getattr__(name: str) -> object:
    # RunClient loads the kubernetes package: only when asked for, so that `kompi render` starts without it
    if name == "RunClient":
        from kompi_components.runs.client import RunClient

        return RunClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BadRequest",
    "ClusterUnreachable",
    "KompiRunRefused",
    "RemoteFileError",
    "RunClient",
    "RunFailed",
    "RunState",
    "RunStatus",
    "RunTimeout",
    "RunsError",
]
