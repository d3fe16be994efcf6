"""RunClient's logic against the image's own kompi-run, run on this machine through a stand-in for the pod's
exec (local_exec.py): start detached, follow, wait (with a timeout), fail with the exit code and last lines,
stop, read and copy files; and how a client finds its cluster (stack outputs, stack files)."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kompi_components.runs import (
    BadRequest,
    KompiRunRefused,
    RemoteFileError,
    RunClient,
    RunFailed,
    RunTimeout,
)
from kompi_components.runs import cli as run_cli
from kompi_components.runs.client import _extract
from kompi_components.runs.pod_exec import PodExec
from tests.runs.local_exec import LocalExec


@pytest.fixture
def local(tmp_path: Path) -> LocalExec:
    return LocalExec(tmp_path)


@pytest.fixture
def runs(local: LocalExec) -> Iterator[RunClient]:
    client = RunClient(local)
    yield client
    for run in client.runs():  # no supervisor left behind
        if not run.finished:
            client.stop(run.name)


def test_a_detached_run_is_followed_and_waited_for(runs: RunClient, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    started = runs.start(["sh", "-c", f"echo first; while [ ! -e {gate} ]; do sleep 0.05; done; echo second"], name="d")
    assert (started.name, started.finished) == ("d", False)
    follower = runs.follow("d")
    seen = ""
    while "first\n" not in seen:  # the output arrives as it is written, before the run ends
        seen += next(follower)
    assert runs.status("d").state == "running"
    gate.touch()
    seen += "".join(follower)
    assert seen.splitlines()[-2:] == ["second", "kompi-run: command succeeded: exit code 0"]
    done = runs.wait("d")
    assert (done.state, done.exit_code) == ("succeeded", 0)
    assert [run.name for run in runs.runs()] == ["d"]


def test_a_failed_run_raises_with_its_exit_code_and_last_lines(runs: RunClient) -> None:
    runs.start("sh -c 'for i in 1 2 3 4 5; do echo line $i; done; exit 3'", name="bad", restarts=1)
    with pytest.raises(RunFailed) as failed:
        runs.wait("bad")
    assert failed.value.exit_code == 3
    assert failed.value.status.reason == "command failed after 1 restart (--restarts 1, spent)"
    end = "kompi-run: command failed after 1 restart (--restarts 1, spent): exit code 3"
    assert failed.value.last_lines[-3:] == ["line 4", "line 5", end]
    assert str(failed.value).startswith("run bad failed, exit code 3: command failed after 1 restart")
    assert runs.wait("bad", check=False).exit_code == 3


def test_wait_gives_up_after_its_timeout_and_stop_ends_the_run(runs: RunClient) -> None:
    runs.start(["sleep", "300"], name="long")
    with pytest.raises(RunTimeout, match=r"^run long still running after 0.5 s; it goes on$"):
        runs.wait("long", timeout=0.5)
    stopped = runs.stop("long")
    assert (stopped.state, stopped.exit_code) == ("stopped", 143)  # SIGTERM, recorded
    with pytest.raises(RunFailed, match=r"^run long stopped, exit code 143: stopped while running"):
        runs.wait("long")


def test_kompi_run_s_refusals_come_back_as_its_own_line(runs: RunClient) -> None:
    with pytest.raises(KompiRunRefused, match=r"^no run 'nothing' in .*runs \(kompi-run status lists them\)$"):
        runs.status("nothing")
    with pytest.raises(KompiRunRefused, match=r"^no run 'nothing' in "):
        next(runs.follow("nothing"))
    runs.start(["true"], name="once")
    with pytest.raises(KompiRunRefused, match=r"^run 'once' exists already .*: choose another --name$"):
        runs.start(["true"], name="once")


def test_files_are_read_and_copied_byte_for_byte(runs: RunClient, tmp_path: Path) -> None:
    remote = tmp_path / "remote" / "ckpt"
    (remote / "shards").mkdir(parents=True)
    data = bytes(range(256)) * 1000 + "é".encode()
    (remote / "shards" / "0.bin").write_bytes(data)
    (remote / "result.json").write_text('{"accuracy": 0.9}')
    (remote / "latest").symlink_to("shards/0.bin")
    assert json.loads(runs.read_file(str(remote / "result.json"))) == {"accuracy": 0.9}
    with pytest.raises(RemoteFileError, match=r"^cannot read /nowhere in this machine: cat: /nowhere: No such file"):
        runs.read_file("/nowhere")
    here = tmp_path / "here"
    here.mkdir()
    copied = runs.copy_from(str(remote), here)  # a directory: into it, under the remote name
    assert copied == here / "ckpt"
    assert (copied / "shards" / "0.bin").read_bytes() == data
    assert (copied / "latest").readlink() == Path("shards/0.bin")
    assert runs.copy_from(str(remote / "result.json"), here / "r.json").read_text() == '{"accuracy": 0.9}'
    with pytest.raises(BadRequest, match=r"ckpt: it exists already; remove it or name another destination$"):
        runs.copy_from(str(remote), here)
    with pytest.raises(BadRequest, match=r"^path 'ckpt': expected an absolute path in the master's container"):
        runs.copy_from("ckpt", here)
    assert [path.name for path in here.iterdir() if path.name.startswith(".")] == []  # no temporary left


def _archive(name: str, kind: bytes, linkname: str = "") -> tarfile.TarFile:
    member = tarfile.TarInfo(name)
    member.type, member.linkname = kind, linkname
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.addfile(member, io.BytesIO(b"") if member.isfile() else None)
    buffer.seek(0)
    return tarfile.open(fileobj=buffer)


@pytest.mark.parametrize(
    ("name", "kind", "linkname", "message"),
    [
        ("ckpt/../../x", tarfile.REGTYPE, "", "holds 'ckpt/../../x', outside ckpt"),
        ("other/x", tarfile.REGTYPE, "", "holds 'other/x', outside ckpt"),
        ("ckpt/l", tarfile.SYMTYPE, "/etc/passwd", "links ckpt/l to /etc/passwd, outside ckpt"),
        ("ckpt/l", tarfile.SYMTYPE, "../../x", "links ckpt/l to ../../x, outside ckpt"),
        ("ckpt/p", tarfile.FIFOTYPE, "", "holds 'ckpt/p', a device or pipe"),
    ],
)
def test_a_copy_s_archive_writes_nothing_outside_its_destination(name, kind, linkname, message, tmp_path) -> None:
    with pytest.raises(RemoteFileError, match=message):
        _extract(_archive(name, kind, linkname), "ckpt", tmp_path / "out")
    assert not (tmp_path / "out").exists()


KUBECONFIG = """apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
"""


class _Output:
    """As Pulumi's Automation API gives a stack output."""

    def __init__(self, value: object) -> None:
        self.value = value


def test_a_client_comes_from_a_stack_s_outputs_and_a_kubeconfig(tmp_path: Path) -> None:
    (tmp_path / "kube.yaml").write_text(KUBECONFIG)
    outputs = {"namespace": _Output("kompi-dev"), "masterPod": _Output("kompi-dev-master-0"), "workers": _Output(2)}
    pod = RunClient.from_outputs(outputs, tmp_path / "kube.yaml")._exec
    assert isinstance(pod, PodExec)
    assert (pod.namespace, pod.pod, pod.container) == ("kompi-dev", "kompi-dev-master-0", "mpi")
    assert pod.core.api_client.configuration.host == "https://127.0.0.1:6443"
    with pytest.raises(BadRequest, match=r"^stack outputs: masterPod = None: expected a name"):
        RunClient.from_outputs({"namespace": "kompi-dev"}, KUBECONFIG)
    with pytest.raises(BadRequest, match=r"^masterPod job/kompi-dev-master: a one-shot cluster"):
        RunClient.from_outputs({"namespace": "n", "masterPod": "job/kompi-dev-master"}, KUBECONFIG)


def test_a_client_comes_from_a_project_s_stack_files(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: kompi\nruntime: python\n")
    (tmp_path / "kube.yaml").write_text(KUBECONFIG)
    stack = "config:\n  kompi:clusterName: lab\n  kompi:namespace: team-a\n  kubernetes:kubeconfig: kube.yaml\n"
    (tmp_path / "Pulumi.lab.yaml").write_text(stack)
    pod = RunClient.from_stack(tmp_path, "lab")._exec
    assert isinstance(pod, PodExec)
    assert (pod.namespace, pod.pod) == ("team-a", "lab-master-0")
    assert pod.core.api_client.configuration.host == "https://127.0.0.1:6443"  # the path, from the project
    (tmp_path / "Pulumi.s.yaml").write_text("config:\n  kubernetes:kubeconfig:\n    secure: AAAB\n")
    with pytest.raises(Exception, match=r"^Pulumi.s.yaml: kubernetes:kubeconfig is a secret, which kompi cannot"):
        RunClient.from_stack(tmp_path, "s")


def test_the_command_line_exits_with_a_failed_run_s_code_and_prints_its_last_lines(
    local: LocalExec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kompi_components.cli import main

    monkeypatch.setattr(RunClient, "connect", classmethod(lambda cls, *args, **kwargs: cls(local)))
    outputs = tmp_path / "outputs.json"
    outputs.write_text("up's lines\n" + json.dumps({"namespace": "n", "masterPod": "m-0"}))  # bin/kompi up's output
    target = ["--outputs", str(outputs)]
    assert main(["run", "start", *target, "--name", "x", "--", "sh", "-c", "echo out; exit 5"]) == 5
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-2:] == ["out", "kompi-run: command failed: exit code 5"]
    assert main(["run", "wait", *target, "x"]) == 5
    assert capsys.readouterr().err.splitlines() == [
        "kompi run: run x failed, exit code 5: command failed",
        "its last 3 lines:",
        "  kompi-run: running: sh -c 'echo out; exit 5'",
        "  out",
        "  kompi-run: command failed: exit code 5",
    ]
    assert main(["run", "status", *target, "nothing"]) == 2
    assert capsys.readouterr().err.startswith("kompi run: no run 'nothing' in ")


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["run", "list"], "kompi run: which cluster: --stack NAME (its Pulumi.NAME.yaml, in --dir) or --outputs FILE"),
        (["run", "list", "--outputs", "/nowhere.json"], "kompi run: --outputs /nowhere.json: cannot read it: No such"),
        (["run", "start", "--stack", "dev", "--env", "A", "--", "true"], "argument --env: 'A': expected KEY=VALUE"),
        (["run", "wait", "--stack", "dev", "x", "--timeout", "soon"], "argument --timeout: 'soon': expected seconds"),
    ],
)
def test_bad_input_on_the_command_line_is_one_line(argv, line, capsys: pytest.CaptureFixture[str]) -> None:
    from kompi_components.cli import main

    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own refusal
        code = int(str(exit_.code))
    assert code == 2
    assert line in capsys.readouterr().err.strip().splitlines()[-1]
    assert run_cli.PROG == "kompi run"
