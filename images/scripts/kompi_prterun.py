#!/usr/bin/python3 -IS
"""prterun for kompi's Open MPI 5 image: PRRTE's launcher, made to exit non-zero when it lost a daemon.

PRRTE 3.0 (Open MPI 5.0's runtime) records the loss of a daemon (a worker pod deleted, its prted
killed, its network cut) on the daemon job only, prints "PRTE has lost communication with a remote
daemon" and shuts down without ever setting its own exit status: mpiexec then exits 0 unless an ssh
session's exit (255) happened to be noticed first. The real launcher is /usr/local/libexec/prterun;
this wrapper runs it with the same arguments, stdin and stdout, passes its stderr through unchanged,
and when PRRTE printed that message but exited 0, exits 205 instead: the code PRRTE itself records for
the loss (PRTE_ERR_COMM_FAILURE, -51) and the one Open MPI 4's mpirun exits with in that case.

Signals sent to this process (kill, kompi-oneshot's SIGTERM) are passed on to the launcher; signals
from the terminal (Ctrl-C) already reach the launcher through its process group and are not doubled.
KOMPI_PRTERUN names another launcher (tests/images/test_prterun_wrapper.py uses a stand-in).
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading

REAL = os.environ.get("KOMPI_PRTERUN", "/usr/local/libexec/prterun")
LOST_DAEMON = b"has lost communication with a remote daemon"
LOST_DAEMON_STATUS = 205
FORWARDED = {signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2}
SI_KERNEL = 0x80  # si_code of a signal the kernel sent (the terminal's Ctrl-C, a hangup)


class Launcher:
    """The real prterun, started with our arguments and environment, its stderr into a pipe."""

    def __init__(self, argv: list[str]) -> None:
        read_end, write_end = os.pipe()
        self.pid = os.posix_spawn(
            REAL,
            ["prterun", *argv],
            os.environ,
            file_actions=[(os.POSIX_SPAWN_DUP2, write_end, 2)],
            setsigmask=(),  # this process blocks the forwarded signals; the launcher must not
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),  # Python ignores these
        )
        os.close(write_end)
        self.stderr = read_end
        self.lock = threading.Lock()
        self.reaped = False

    def forward_signals(self) -> None:
        """Pass every signal sent to this process on to the launcher (runs on its own thread)."""
        while True:
            info = signal.sigwaitinfo(FORWARDED)
            if info.si_code == SI_KERNEL:
                continue  # the terminal's: it went to the whole foreground process group
            with self.lock:  # never signal a pid that was reaped (and may be reused)
                if self.reaped:
                    return
                os.kill(self.pid, info.si_signo)

    def wait(self, exited: int) -> None:
        """Until the launcher exits, then a byte to ``exited``; it stays a zombie until reap()."""
        os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
        os.write(exited, b"x")

    def reap(self) -> int:
        with self.lock:
            self.reaped = True
            return os.waitpid(self.pid, 0)[1]


def write_all(data: bytes) -> bool:
    """Write to this process's stderr; False once it is gone (the launcher's output is still drained)."""
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(2, view) :]
    except OSError:
        return False
    return True


class StderrPump:
    """Copies the launcher's stderr to ours as it comes and watches it for PRRTE's lost-daemon message."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.tail = b""
        self.lost_daemon = False
        self.writable = True
        self.at_line_start = True

    def feed(self, data: bytes) -> None:
        if self.writable:
            self.writable = write_all(data)
        self.at_line_start = data.endswith(b"\n")
        if not self.lost_daemon:
            window = self.tail + data
            self.lost_daemon = LOST_DAEMON in window
            self.tail = window[-len(LOST_DAEMON) :]

    def read_once(self) -> bool:
        """One read; False at end of file."""
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return False
        if data:
            self.feed(data)
        return bool(data)

    def drain(self) -> None:
        """What is left in the pipe once the launcher exited (without waiting for processes it left)."""
        os.set_blocking(self.fd, False)
        while self.read_once():
            pass


def exit_like(status: int, pump: StderrPump) -> None:
    if os.WIFSIGNALED(status):
        # die of the same signal (to this thread alone: the forwarding thread must not take it)
        number = os.WTERMSIG(status)
        if number != signal.SIGKILL:
            signal.signal(number, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
        signal.pthread_kill(threading.get_ident(), number)
        sys.exit(128 + number)
    code = os.waitstatus_to_exitcode(status)
    if code == 0 and pump.lost_daemon:
        write_all(
            (b"" if pump.at_line_start else b"\n")
            + b"kompi: the launcher lost a daemon but exited 0 (PRRTE 3.0); exiting %d\n" % LOST_DAEMON_STATUS
        )
        code = LOST_DAEMON_STATUS
    sys.exit(code)


def main(argv: list[str]) -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
    try:
        launcher = Launcher(argv)
    except OSError as error:
        sys.exit(f"kompi: cannot run {REAL}: {error.strerror}")
    exited_r, exited_w = os.pipe()
    threading.Thread(target=launcher.forward_signals, daemon=True).start()
    threading.Thread(target=launcher.wait, args=(exited_w,), daemon=True).start()
    pump = StderrPump(launcher.stderr)
    while True:
        ready, _, _ = select.select([launcher.stderr, exited_r], [], [])
        if exited_r in ready:
            pump.drain()  # what the launcher wrote; not what processes it left behind may still write
            break
        if not pump.read_once():
            os.read(exited_r, 1)  # end of file first: the launcher is exiting
            break
    exit_like(launcher.reap(), pump)


if __name__ == "__main__":
    main(sys.argv[1:])
