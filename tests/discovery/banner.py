"""A stand-in for the workers' sshd: it sends the SSH banner that kompi-wait looks for, and nothing more."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def sshd_banner(address: str = "127.0.0.1") -> Iterator[int]:
    """A TCP listener that greets like sshd, on ``address`` and a free port (127.0.0.2 has nothing there
    unless ``address`` is 0.0.0.0). Yields the port."""
    listener = socket.create_server((address, 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.sendall(b"SSH-2.0-OpenSSH_9.2 kompi-test\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        listener.close()
