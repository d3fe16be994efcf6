"""Every kubectl call kompi makes aims at the cluster the stack's Kubernetes provider uses: the command
lines built from `kubernetes:kubeconfig` / `kubernetes:context` / `kubernetes:cluster`, and each caller's."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kompi_components.config import load_config
from kompi_components.kube.access import kubeconfig_path
from kompi_components.stack_files import read_stack_config
from kompi_engine.kubectl import Kubectl, provider_kubectl
from kompi_engine.operation import job_readiness
from kompi_engine.operation.api_watch import ApiWatch
from kompi_engine.operation.automation import Workspace
from kompi_engine.operation.gang_watch import GangWatch
from tests.stacks import REPO

KUBECONFIG_TEXT = "apiVersion: v1\nkind: Config\ncurrent-context: live\n"


def test_without_provider_settings_kubectl_keeps_its_own_lookup(tmp_path: Path) -> None:
    with provider_kubectl("kubectl", {}, tmp_path) as kubectl:
        assert kubectl.command("get", "--raw", "/readyz") == ["kubectl", "get", "--raw", "/readyz"]


def test_context_and_cluster_are_passed_on(tmp_path: Path) -> None:
    settings = {"kubernetes:context": "live", "kubernetes:cluster": "c"}
    with provider_kubectl("/bin/kubectl", settings, tmp_path) as kubectl:
        assert kubectl.command("get", "pods") == ["/bin/kubectl", "--context", "live", "--cluster", "c", "get", "pods"]


def test_a_kubeconfig_path_is_taken_as_the_provider_takes_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "kube.yaml").write_text(KUBECONFIG_TEXT)
    assert kubeconfig_path("kube.yaml", tmp_path) == tmp_path / "kube.yaml"  # relative: from the base
    assert kubeconfig_path("./missing.yaml", tmp_path) == tmp_path / "missing.yaml"  # a dot: a path all the same
    assert kubeconfig_path("/etc/k.yaml", tmp_path) == Path("/etc/k.yaml")
    assert kubeconfig_path("~/.kube/config", tmp_path) == tmp_path / "home" / ".kube" / "config"
    assert kubeconfig_path("missing.yaml", tmp_path) is None  # neither a file nor a path: the provider parses it
    assert kubeconfig_path(KUBECONFIG_TEXT, tmp_path) is None
    with provider_kubectl("kubectl", {"kubernetes:kubeconfig": "kube.yaml"}, tmp_path) as kubectl:
        assert kubectl.command("version") == ["kubectl", "--kubeconfig", str(tmp_path / "kube.yaml"), "version"]


@pytest.mark.parametrize("text", [KUBECONFIG_TEXT, json.dumps(yaml.safe_load(KUBECONFIG_TEXT))])
def test_a_kubeconfig_given_as_text_becomes_a_private_file_for_the_block(tmp_path: Path, text: str) -> None:
    settings = {"kubernetes:kubeconfig": text, "kubernetes:context": "live"}
    with provider_kubectl("kubectl", settings, tmp_path) as kubectl:
        assert kubectl.kubeconfig is not None
        written = Path(kubectl.kubeconfig)
        assert written.read_text() == text and written.stat().st_mode & 0o777 == 0o600
        assert kubectl.command("version") == ["kubectl", "--kubeconfig", str(written), "--context", "live", "version"]
    assert not written.exists()


def test_the_working_copy_anchors_a_relative_kubeconfig_path_to_the_project(tmp_path: Path) -> None:
    """Pulumi works in .kompi/stacks/NAME/: there the user's relative path would name another file."""
    (tmp_path / "Pulumi.yaml").write_text((REPO / "Pulumi.yaml").read_text())
    (tmp_path / "kube.yaml").write_text(KUBECONFIG_TEXT)
    for value, copied in (
        ("kube.yaml", str(tmp_path / "kube.yaml")),
        ("/abs/kube.yaml", "/abs/kube.yaml"),
        (KUBECONFIG_TEXT, KUBECONFIG_TEXT),
        ({"secure": "v1:abc"}, {"secure": "v1:abc"}),
    ):
        settings = {"config": {"kompi:workers": 1, "kubernetes:kubeconfig": value}}
        (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump(settings))
        workspace = Workspace(tmp_path, "dev")
        workspace.sync_stack_files()
        copy = yaml.safe_load((workspace.work_dir / "Pulumi.dev.yaml").read_text())
        assert copy["config"]["kubernetes:kubeconfig"] == copied
        assert yaml.safe_load((tmp_path / "Pulumi.dev.yaml").read_text()) == settings  # the user's file untouched


# -- each caller: a fake kubectl records its command lines and answers as an API server would
FAKE_KUBECTL = """#!{python}
import json, sys
args = sys.argv[1:]
with open({log!r}, "a") as log:
    log.write(json.dumps(args) + "\\n")
words = [a for a in args if not a.startswith("-")]
if "statefulset" in words:
    print(json.dumps({{"metadata": {{"generation": 1}}, "spec": {{"replicas": 1}},
                      "status": {{"observedGeneration": 1, "readyReplicas": 1,
                                 "currentRevision": "r", "updateRevision": "r"}}}}))
elif "pods" in words:
    print(json.dumps({{"items": []}}))
elif "pod" in words:
    print("kwok-node-0")
elif "node" in words:
    print("fake")
else:
    print("ok")
"""
TARGET = ["--kubeconfig", "/stack/kubeconfig", "--context", "live"]


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Kubectl, Path]]:
    """The fake kubectl, and after the test the check that it is the only program the caller started: a call
    beside Kubectl.run would ask kubectl's current context again."""
    log = tmp_path / "calls.jsonl"
    binary = tmp_path / "kubectl"
    binary.write_text(FAKE_KUBECTL.format(python=sys.executable, log=str(log)))
    binary.chmod(0o755)
    started: list[list[str]] = []
    real_init = subprocess.Popen.__init__

    def recording_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **options: Any) -> None:
        started.append([str(arg) for arg in args] if isinstance(args, list | tuple) else [str(args)])
        real_init(self, args, *rest, **options)

    monkeypatch.setattr(subprocess.Popen, "__init__", recording_init)
    yield Kubectl(str(binary), "/stack/kubeconfig", "live"), log
    monkeypatch.undo()
    assert started and all(command[:5] == [str(binary), *TARGET] for command in started), started


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_the_api_watch_asks_the_providers_cluster(recorded: tuple[Kubectl, Path]) -> None:
    kubectl, log = recorded
    assert ApiWatch(kubectl, on_lost=lambda: None, say=print)._answers()
    assert calls(log) == [[*TARGET, "get", "--raw", "/readyz", "--request-timeout=5s"]]


def test_the_gang_watch_reads_the_pods_of_the_providers_cluster(recorded: tuple[Kubectl, Path]) -> None:
    kubectl, log = recorded
    gang = GangWatch(load_config(read_stack_config(REPO, "gpu")), kubectl, say=print)
    assert gang._pods() == []
    assert calls(log) == [[*TARGET, "get", "pods", "-n", gang.namespace, "-l", gang.selector, "-o", "json"]]


def test_the_readiness_wait_reads_the_providers_cluster(recorded: tuple[Kubectl, Path]) -> None:
    kubectl, log = recorded
    said: list[str] = []
    job_readiness.wait_until_jobs_can_run(load_config(read_stack_config(REPO, "dev")), kubectl, said.append, 10)
    made = calls(log)
    assert [call[:4] for call in made] == [TARGET] * 2  # the master's node, that node's kind
    assert [call[4:6] for call in made] == [["get", "pod"], ["get", "node"]]
    assert said == ["kompi-dev-master-0 runs on a kwok node (no container): not asking it for its hostfile"]
