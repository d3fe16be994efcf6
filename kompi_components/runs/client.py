"""RunClient: runs on a kompi cluster's master from a notebook or a script, over the Kubernetes API's exec."""

from __future__ import annotations

import codecs
import json
import os
import shutil
import tarfile
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath

from kubernetes.config.config_exception import ConfigException

from kompi_components.config import load_config
from kompi_components.kube.access import ClusterAccess, kubeconfig_path
from kompi_components.naming import cluster_names
from kompi_components.runs import commands
from kompi_components.runs.errors import (
    BadRequest,
    ClusterUnreachable,
    KompiRunRefused,
    RemoteFileError,
    RunFailed,
    RunTimeout,
)
from kompi_components.runs.pod_exec import Completed, Exec, PodExec
from kompi_components.runs.status import RunStatus
from kompi_components.stack_files import read_provider_settings, read_stack_config

CONTAINER = "mpi"  # the master pod's MPI container, where kompi-run and mpiexec are
LAST_LINES = 20
WAIT_STEP = 300.0  # seconds one `kompi-run wait` exec lasts at most: no connection idles for hours
REFUSED = 2  # kompi-run's exit code for a request it refuses (with one line on stderr)
NOT_FOUND = (126, 127)  # the shell's "cannot run" and "no such command"


class RunClient:
    """The runs of one kompi cluster, through commands in its master's container (``connect``, ``from_outputs``,
    ``from_stack`` make one)."""

    def __init__(self, pod: Exec) -> None:
        self._exec = pod

    @classmethod
    def connect(
        cls, namespace: str, master_pod: str, access: ClusterAccess | None = None, container: str = CONTAINER
    ) -> RunClient:
        """The master pod ``master_pod`` in ``namespace``, reached with ``access`` (a kubeconfig; default:
        $KUBECONFIG, then ~/.kube/config, then the pod's own service account)."""
        if master_pod.startswith("job/"):
            raise BadRequest(
                f"masterPod {master_pod}: a one-shot cluster (kompi:oneShot) runs its command as a Job; "
                "runs need a long-lived master"
            )
        try:
            api = (access or ClusterAccess()).api_client(connections=4)
        except (ConfigException, OSError) as error:
            where = "the kubeconfig given" if access and access.kubeconfig else "no kubeconfig found"
            raise ClusterUnreachable(
                f"{where} ({error}): pass one (--kubeconfig, kubeconfig=) or set KUBECONFIG"
            ) from None
        return cls(PodExec(api, namespace, master_pod, container))

    @classmethod
    def from_outputs(
        cls,
        outputs: Mapping[str, object],
        kubeconfig: str | os.PathLike[str] | None = None,
        context: str | None = None,
    ) -> RunClient:
        """From a stack's outputs (``namespace``, ``masterPod``: Pulumi's ``stack.outputs()``, ``pulumi stack
        output --json``, the last line of ``bin/kompi up``) and a kubeconfig (a path or the file's text; default:
        $KUBECONFIG, then ~/.kube/config)."""
        values = {key: getattr(value, "value", value) for key, value in outputs.items()}  # Automation API's OutputValue
        namespace = values.get("namespace")
        master = values.get("masterPod", values.get("master_pod"))
        for key, value in (("namespace", namespace), ("masterPod", master)):
            if not isinstance(value, str) or not value:
                raise BadRequest(f"stack outputs: {key} = {value!r}: expected a name (the outputs of a kompi stack)")
        assert isinstance(namespace, str) and isinstance(master, str)
        return cls.connect(
            namespace, master, ClusterAccess(None if kubeconfig is None else os.fspath(kubeconfig), context)
        )

    @classmethod
    def from_stack(
        cls,
        project_dir: str | os.PathLike[str],
        stack: str,
        kubeconfig: str | os.PathLike[str] | None = None,
        context: str | None = None,
    ) -> RunClient:
        """From a project's stack files (Pulumi.yaml, Pulumi.STACK.yaml): the names its config gives the
        cluster, and the stack's ``kubernetes:kubeconfig`` and ``kubernetes:context`` unless given here.
        Reads no Pulumi state."""
        directory = Path(project_dir)
        config = load_config(read_stack_config(directory, stack))
        if config.one_shot.enabled:
            raise BadRequest(f"stack {stack}: kompi:oneShot runs its command as a Job; runs need a long-lived master")
        names = cluster_names(config)
        settings = read_provider_settings(directory, stack)
        value = os.fspath(kubeconfig) if kubeconfig is not None else settings.get("kubernetes:kubeconfig")
        if kubeconfig is None and value is not None and (path := kubeconfig_path(value, directory)) is not None:
            value = str(path)  # relative to the project, as the provider takes it
        access = ClusterAccess(value, context or settings.get("kubernetes:context"), settings.get("kubernetes:cluster"))
        return cls.connect(names.namespace, names.master_pod, access)

    # ------------------------------------------------------------------ runs
    def start(
        self,
        command: str | Sequence[str],
        *,
        name: str | None = None,
        ranks: int | None = None,
        env: Mapping[str, str] | None = None,
        restarts: int = 0,
        workers: int | None = None,
    ) -> RunStatus:
        """Starts a run that goes on when this process ends (commands.launched: ``ranks``, ``env``).
        ``restarts``: started again after a failure up to so many times; ``workers``: waited for before each
        attempt (default: the hostfile's). Returns its status once it started."""
        name = name or commands.default_name()
        self._kompi_run(commands.start(name, command, ranks, env, restarts, workers))
        return self.status(name)

    def runs(self) -> list[RunStatus]:
        """Every run of the master, by name."""
        done = self._kompi_run([commands.PROGRAM, "status", "--json"])
        listed = _json(done.stdout, "kompi-run status --json")
        if not isinstance(listed, list):
            raise ClusterUnreachable(f"kompi-run status --json: expected a list, got {type(listed).__name__}")
        return [RunStatus.from_json(item) for item in listed]

    def status(self, name: str) -> RunStatus:
        done = self._kompi_run([commands.PROGRAM, "status", commands.run_name(name), "--json"])
        return RunStatus.from_json(_json(done.stdout, f"kompi-run status {name} --json"))

    def logs(self, name: str) -> str:
        """The run's output so far."""
        done = self._kompi_run([commands.PROGRAM, "logs", commands.run_name(name)])
        return done.stdout.decode(errors="replace")

    def follow(self, name: str) -> Iterator[str]:
        """The run's output as it is written, from its start to its end; stopping early (Ctrl-C, ``break``)
        leaves the run going."""
        self.status(name)  # a run that does not exist: kompi-run's line (its follower would raise a traceback)
        session = self._exec.open([commands.PROGRAM, "logs", "--follow", name])
        text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        for chunk in session.chunks():
            if decoded := text.decode(chunk):
                yield decoded
        if rest := text.decode(b"", final=True):
            yield rest
        self._checked(session.result(), ["logs", name])

    def last_lines(self, name: str, count: int = LAST_LINES) -> list[str]:
        done = self._kompi_run(commands.last_lines(name, count))
        return done.stdout.decode(errors="replace").splitlines()

    def wait(self, name: str, timeout: float | None = None, check: bool = True) -> RunStatus:
        """Until the run ends; its status. ``check``: a run that did not succeed raises RunFailed (its exit code
        and last lines). Past ``timeout`` seconds, RunTimeout; the run goes on."""
        commands.run_name(name)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = WAIT_STEP if deadline is None else max(0.0, min(WAIT_STEP, deadline - time.monotonic()))
            # its exit code is the run's (2 and 124 included), so the status says how it went, not the code
            self._exec.run([commands.PROGRAM, "wait", name, "--timeout", f"{left:g}"])
            status = self.status(name)
            if status.finished:
                break
            if deadline is not None and time.monotonic() >= deadline:
                assert timeout is not None
                raise RunTimeout(status, timeout)
        if check and not status.succeeded:
            raise RunFailed(status, self.last_lines(name))
        return status

    def stop(self, name: str) -> RunStatus:
        """Ends the run's command (mpiexec and, through it, every rank: SIGTERM, then SIGKILL after kompi-run's
        grace); returns its status, the exit recorded."""
        self._kompi_run([commands.PROGRAM, "stop", commands.run_name(name)])
        return self.status(name)

    # ------------------------------------------------------------------ files
    def read_file(self, path: str) -> bytes:
        """One file's bytes from the master's container (a volume it mounts: result.json, a small checkpoint),
        through ``cat``: the bytes as they are, in memory. For directories and big files, ``copy_from``."""
        remote = _absolute(path)
        done = self._exec.run(["cat", "--", remote])
        if done.code != 0:
            raise RemoteFileError(f"cannot read {remote} in {self._exec.where}: {done.stderr_line()}")
        return done.stdout

    def copy_from(self, path: str, destination: str | os.PathLike[str]) -> Path:
        """A file or a directory of the master's container to ``destination`` (into it when it is a directory),
        through ``tar``: a directory's tree, modes and times in one stream, written to disk as it arrives.
        Returns the local path; one that exists is not overwritten."""
        remote = PurePosixPath(_absolute(path))
        if remote.name in ("", ".", ".."):
            raise BadRequest(f"copy {path!r}: name a file or a directory, not {remote}")
        target = Path(destination)
        if target.is_dir():
            target = target / remote.name
        if target.exists() or target.is_symlink():
            raise BadRequest(f"copy to {target}: it exists already; remove it or name another destination")
        if not target.parent.is_dir():
            raise BadRequest(f"copy to {target}: no directory {target.parent}")
        with tempfile.TemporaryDirectory(prefix=".kompi-copy-", dir=target.parent) as temporary:
            archive = Path(temporary) / "copy.tar"
            with archive.open("wb") as out:
                done = self._exec.stream(["tar", "-cf", "-", "-C", str(remote.parent), remote.name], out.write)
            if done.code != 0:
                raise RemoteFileError(f"cannot copy {remote} from {self._exec.where}: {done.stderr_line()}")
            unpacked = Path(temporary) / "unpacked"
            with tarfile.open(archive) as tar:
                _extract(tar, remote.name, unpacked)
            shutil.move(unpacked / remote.name, target)
        return target

    # ------------------------------------------------------------------ kompi-run itself
    def _kompi_run(self, argv: list[str]) -> Completed:
        return self._checked(self._exec.run(argv), argv[1:])

    def _checked(self, done: Completed, action: list[str]) -> Completed:
        if done.code == 0:
            return done
        if done.code in NOT_FOUND:
            raise ClusterUnreachable(
                f"no kompi-run in {self._exec.where} (exit {done.code}): its image predates kompi-run; use kompi's "
                "image of this version"
            )
        line = done.stderr_line().removeprefix(f"{commands.PROGRAM}: ")
        if done.code == REFUSED:
            raise KompiRunRefused(line)
        raise ClusterUnreachable(f"kompi-run {action[0]} exited {done.code} in {self._exec.where}: {line}")


def _json(data: bytes, what: str) -> object:
    try:
        return json.loads(data)
    except json.JSONDecodeError:
        raise ClusterUnreachable(f"{what}: not JSON: {data[:200]!r}") from None


def _absolute(path: str) -> str:
    if not isinstance(path, str) or not path.startswith("/"):
        raise BadRequest(f"path {path!r}: expected an absolute path in the master's container, e.g. /checkpoints/x")
    return path


def _extract(tar: tarfile.TarFile, top: str, into: Path) -> None:
    """Only what ``tar -C PARENT TOP`` makes: files, directories and links under TOP, no link leading out."""
    members = tar.getmembers()
    for member in members:
        parts = PurePosixPath(member.name).parts
        if not parts or parts[0] != top or ".." in parts or member.name.startswith("/"):
            raise RemoteFileError(f"the copy's archive holds {member.name!r}, outside {top}: refused")
        if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
            raise RemoteFileError(f"the copy's archive holds {member.name!r}, a device or pipe: refused")
        if member.issym() or member.islnk():
            base = PurePosixPath(member.name).parent if member.issym() else PurePosixPath()
            target = PurePosixPath(os.path.normpath(base / member.linkname))
            if member.linkname.startswith("/") or not target.parts or target.parts[0] != top:
                raise RemoteFileError(f"the copy's archive links {member.name} to {member.linkname}, outside {top}")
    if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later check the same again
        tar.extractall(into, members, filter="data")
    else:
        tar.extractall(into, members)
