"""Jobs that a fault ends, for the real-node failure tests: a running stack, an allreduce loop over every
worker in the background (`kubectl exec <master> -c mpi -- mpiexec ...`), and how that job ended."""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl, pods_ready, wait_until
from tests.e2e.node.mpi import exec_command, exec_in, run_in

LOOP = Path(__file__).with_name("allreduce_loop.py").read_text()
EXIT_WITHIN = 60.0  # seconds from the fault to mpiexec's exit
JOB_SECONDS = 120  # the loop outlives every fault by far: only the fault ends the job
PROGRAM_LINE = re.compile(r"rank \d+ (on \S+ running|exits \d+|done)$")
STOP_LAUNCHERS = (
    'for p in /proc/[0-9]*; do case $(cat "$p/comm" 2>/dev/null) in'
    ' prterun|mpiexec|mpirun) kill -KILL "${p#/proc/}" ;; esac; done'
)


@dataclass(frozen=True)
class Stack:
    """A running kompi stack of one flavour: master and ``workers`` workers, every pod Ready."""

    kubectl: Kubectl
    local: LocalCluster  # the local cluster whose real nodes run the pods
    flavor: str
    name: str  # the cluster name; also its namespace
    workers: int = 2

    @property
    def namespace(self) -> str:
        return self.name

    @property
    def master(self) -> str:
        return f"{self.name}-master-0"

    def worker(self, index: int) -> str:
        return f"{self.name}-worker-{index}"

    def every_worker_ready(self) -> None:
        """Every pod Ready again, and the master's hostfile lists every worker (kompi-wait)."""
        wait_until("every pod Ready", lambda: pods_ready(self.kubectl, self.namespace), 180)
        exec_in(
            self.kubectl, self.namespace, self.master, "kompi-wait", str(self.workers), "--timeout", "120", timeout=180
        )

    def stop_leftover_launchers(self) -> None:
        run_in(self.kubectl, self.namespace, self.master, "sh", "-c", STOP_LAUNCHERS, timeout=60)


def without_program_lines(output: str) -> str:
    """The output without the program's own lines (which name their rank and host themselves)."""
    return "".join(line for line in output.splitlines(keepends=True) if not PROGRAM_LINE.match(line))


@dataclass(frozen=True)
class Ending:
    """How a job ended after a fault: its exit code (None: still running after EXIT_WITHIN) and output."""

    code: int | None
    seconds: float
    output: str

    def __str__(self) -> str:
        return f"exit {self.code} after {self.seconds:.1f} s"

    @property
    def launcher_output(self) -> str:
        return without_program_lines(self.output)

    def names(self, *words: str) -> bool:
        """Whether the launcher's output, not the program's, says every one of ``words``."""
        return all(word in self.launcher_output for word in words)


class Job:
    """`mpiexec` over every worker through `kubectl exec`, in the background; output to a file."""

    def __init__(self, stack: Stack, log: Path, *program_args: str) -> None:
        self.stack = stack
        self.log = log
        command = ["mpiexec", "-n", str(stack.workers), "python3", "-c", LOOP, str(JOB_SECONDS), *program_args]
        with log.open("w") as out:
            argv = exec_command(stack.kubectl, stack.namespace, stack.master, *command)
            self.process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_running(self) -> None:
        """Until every rank has done its first allreduce (all connected), then a second of the loop."""

        def running() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"the job ended before it ran (exit {self.process.returncode}):\n{self.output()}")
            return all(f"rank {rank} on " in self.output() for rank in range(self.stack.workers))

        wait_until("every rank running", running, 120)
        time.sleep(1)

    def end(self, fault: float) -> Ending:
        """Waits up to EXIT_WITHIN after ``fault`` (a time.monotonic()); a job still running is stopped."""
        try:
            code: int | None = self.process.wait(timeout=max(0.0, fault + EXIT_WITHIN - time.monotonic()))
        except subprocess.TimeoutExpired:
            code = None
            self.process.kill()
            self.process.wait()
            self.stack.stop_leftover_launchers()
        return Ending(code, time.monotonic() - fault, self.output())
