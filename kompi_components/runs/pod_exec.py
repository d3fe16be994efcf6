"""Commands in the master's container through the Kubernetes API's exec (kubernetes.stream), no kubectl.

Output travels as bytes (``binary=True``): the text mode decodes each websocket frame on its own, which breaks
a character whose bytes two frames split, and would garble a file's bytes."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.stream import stream

from kompi_components.runs.errors import ClusterUnreachable

STDOUT, STDERR, STATUS = 1, 2, 3  # the exec protocol's channels
STDERR_KEPT = 65536
POLL = 1.0  # seconds one wait for data lasts, so that Ctrl-C is seen between waits


@dataclass(frozen=True)
class Completed:
    code: int
    stdout: bytes
    stderr: bytes

    def stderr_line(self) -> str:
        """The last line the command wrote to stderr (its own message), else a note of its exit code."""
        lines = self.stderr.decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else f"exit code {self.code}, no message"


class Exec(Protocol):
    """Commands in one container (PodExec; the tests' stand-in runs them on this machine)."""

    @property
    def where(self) -> str: ...

    def run(self, command: Sequence[str]) -> Completed: ...

    def stream(self, command: Sequence[str], on_stdout: Callable[[bytes], object]) -> Completed: ...

    def open(self, command: Sequence[str]) -> Stream: ...


class Stream(Protocol):
    def chunks(self) -> Iterator[bytes]: ...

    def result(self) -> Completed: ...


class _Discard:
    def write(self, _data: object) -> None:
        pass


class PodExec:
    """Runs commands in one container of one pod."""

    def __init__(self, api: client.ApiClient, namespace: str, pod: str, container: str) -> None:
        self.core = client.CoreV1Api(api)
        self.namespace, self.pod, self.container = namespace, pod, container

    def run(self, command: Sequence[str]) -> Completed:
        """``command`` to its end: its exit code and output."""
        out = bytearray()
        done = self.stream(command, out.extend)
        return replace(done, stdout=bytes(out))

    def stream(self, command: Sequence[str], on_stdout: Callable[[bytes], object]) -> Completed:
        """``command`` to its end, its stdout handed to ``on_stdout`` as it arrives (memory stays small: a
        checkpoint's tar goes through here), and left out of the result."""
        session = self.open(command)
        for chunk in session.chunks():
            on_stdout(chunk)
        return session.result()

    def open(self, command: Sequence[str]) -> Session:
        return Session(self._open(command), self.where)

    @property
    def where(self) -> str:
        return f"pod {self.pod} (namespace {self.namespace}, container {self.container})"

    def _open(self, command: Sequence[str]) -> Any:
        try:
            socket = stream(
                self.core.connect_get_namespaced_pod_exec,
                self.pod,
                self.namespace,
                command=list(command),
                container=self.container,
                stdin=False,
                stdout=True,
                stderr=True,
                tty=False,
                binary=True,
                _preload_content=False,
            )
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as error:
            raise ClusterUnreachable(self._why_not(error)) from None
        # The client keeps a copy of all output for read_all(), which is never called here: without this, a
        # copied checkpoint would sit in memory whole.
        socket._all = _Discard()
        return socket

    def _why_not(self, error: Exception) -> str:
        """Why exec failed, read from the pod: what a person can do about it, not the websocket's reason."""
        try:
            pod = self.core.read_namespaced_pod(self.pod, self.namespace)
        except ApiException as read:
            if read.status == 404:
                return (
                    f"no pod {self.pod} in namespace {self.namespace}: is the cluster up, and is this its "
                    "masterPod output and its kubeconfig?"
                )
            return f"cannot read pod {self.pod} in namespace {self.namespace}: {read.status} {read.reason}"
        except (urllib3.exceptions.HTTPError, OSError) as down:
            host = self.core.api_client.configuration.host
            return f"cannot reach the Kubernetes API server at {host}: {_first_line(str(down))}"
        return pod_not_running(pod, self.container) or f"exec in {self.where} failed: {_first_line(str(error))}"


class Session:
    """One exec: its stdout as it arrives (``chunks``), then its exit code and the end of its stderr."""

    def __init__(self, socket: Any, where: str) -> None:
        self._socket, self._where = socket, where
        self._stderr = bytearray()
        self._result: Completed | None = None

    def chunks(self) -> Iterator[bytes]:
        """Closing the iterator early closes the exec (the command in the pod gets no more readers)."""
        socket = self._socket
        try:
            while socket.is_open():
                socket.update(timeout=POLL)
                yield from _drained(socket, self._stderr)
            yield from _drained(socket, self._stderr)  # what came with the end
            status = socket.read_channel(STATUS, timeout=0)
        finally:
            socket.close()
        self._result = Completed(exit_code(status, self._where), b"", bytes(self._stderr))

    def result(self) -> Completed:
        if self._result is None:
            raise RuntimeError("Session.result() before its chunks() ended")
        return self._result


def _drained(socket: Any, stderr: bytearray) -> Iterator[bytes]:
    # timeout=0: what has arrived (the client's default, None, would wait for more)
    if chunk := socket.read_channel(STDERR, timeout=0):
        stderr.extend(chunk)
        del stderr[:-STDERR_KEPT]  # the end of stderr is what errors quote
    if chunk := socket.read_channel(STDOUT, timeout=0):
        yield chunk


def exit_code(status: bytes | str, where: str) -> int:
    """The command's exit code from the exec's status channel (a Kubernetes Status object as JSON)."""
    text = status.decode(errors="replace") if isinstance(status, bytes) else status
    if not text.strip():
        raise ClusterUnreachable(f"exec in {where} ended without an exit status: the connection was lost")
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        raise ClusterUnreachable(f"exec in {where}: unreadable exit status {_first_line(text)!r}") from None
    if parsed.get("status") == "Success":
        return 0
    for cause in (parsed.get("details") or {}).get("causes") or []:
        if cause.get("reason") == "ExitCode" and str(cause.get("message", "")).lstrip("-").isdigit():
            return int(cause["message"])
    # no exit code: the command did not start (no such program, the container went away)
    raise ClusterUnreachable(f"exec in {where} failed: {_first_line(str(parsed.get('message') or text))}")


def pod_not_running(pod: client.V1Pod, container: str) -> str | None:
    """Why ``container`` of ``pod`` cannot take an exec, or None when it runs."""
    name = pod.metadata.name if pod.metadata else "?"
    status = pod.status or client.V1PodStatus()
    if status.phase != "Running":
        return f"pod {name} is {status.phase}, not Running: exec needs its container {container} running"
    for found in status.container_statuses or []:
        if found.name == container:
            if found.state and found.state.running:
                return None
            waiting = found.state.waiting if found.state else None
            why = f" ({waiting.reason}: {waiting.message or ''})" if waiting else ""
            return f"pod {name}: container {container} is not running{why}"
    return f"pod {name} has no container {container}"


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0][:300] if lines else "no reason given"
