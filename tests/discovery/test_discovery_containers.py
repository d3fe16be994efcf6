"""Discovery, wait and one-shot in kompi's images, with readiness published by a real DNS server.

Each test runs kompi's rendered pods as podman containers (tests/images harness) whose only source of
other pods' names is ``ClusterDns``; the test publishes a worker when its readiness probe passes and
withdraws it when the worker goes, as the endpoints controller and cluster DNS do.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from kompi_components.config import load_config
from kompi_components.manifests.cluster import build_cluster
from kompi_components.naming import cluster_names
from kompi_components.ssh_identity import SEED_BYTES, identity_files
from tests.discovery.harness import DnsCluster, FakeKubeApi, dns_cluster, wait_for_file
from tests.images.cluster import NAMESPACE, Pod, RenderedCluster, render_cluster, secret_files, statefulset_pods
from tests.images.podman import exec_in, podman, podman_env

pytestmark = pytest.mark.containers
JOIN_LIMIT = 2.0  # a sweep a second
LEAVE_LIMIT = 4.0  # 3 sweeps must deny a worker (kompi_discovery.sweep.MISSES_TO_DROP)


def hostfile(cluster: DnsCluster, ordinals: list[int]) -> str:
    workers = cluster.rendered.workers
    return "".join(f"{workers[o].fqdn} slots=1\n" for o in sorted(ordinals))


def start_master(cluster: DnsCluster) -> None:
    cluster.start_ready(cluster.rendered.master)  # the master is an endpoint too; discovery skips it


def exec_background(container: str, script: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["podman", "exec", container, "bash", "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=podman_env(),
    )


@pytest.mark.parametrize("flavor", ["ompi4", "ompi5"])
def test_cold_start_launches_once_after_every_worker_is_ready(
    images: dict[str, str], flavor: str, tmp_path: Path
) -> None:
    rendered = render_cluster(images[flavor], workers=4, run_as_root=False)
    assert "KOMPI_WORKERS" not in {e["name"] for e in rendered.master.container["env"]}
    with dns_cluster(rendered, tmp_path) as cluster:
        start_master(cluster)
        master = cluster.containers[rendered.master.name]
        # mpiexec without --hostfile: the image's default-hostfile parameter points at the hostfile.
        job = exec_background(master, "kompi-wait 4 --timeout 90 && echo LAUNCH $(date +%s.%N) && mpiexec hostname")
        # A shuffled order and stagger, the same in every run (seeded), so that a failure can be run again.
        shuffle = random.Random(f"cold-start-{flavor}")
        order = shuffle.sample(range(4), 4)
        published = {}
        for ordinal in order:
            time.sleep(shuffle.uniform(0.0, 1.5))
            published[ordinal] = cluster.start_ready(rendered.workers[ordinal])
        out, err = job.communicate(timeout=120)
    assert job.returncode == 0, err
    launches = [float(line.split()[1]) for line in out.splitlines() if line.startswith("LAUNCH")]
    assert len(launches) == 1
    last_ready = max(published.values())
    print(f"\n{flavor}: order {order}; launched {launches[0] - last_ready:.2f}s after the last worker was ready")
    assert launches[0] >= last_ready
    hosts = sorted(line for line in out.splitlines() if not line.startswith("LAUNCH"))
    assert hosts == sorted(pod.name for pod in rendered.workers)  # one rank on each worker, none on the master


def test_a_computing_master_runs_rank_0_and_the_workers_the_rest(images: dict[str, str], tmp_path: Path) -> None:
    rendered = render_cluster(images["ompi5"], workers=2, run_as_root=False, master_computes=True)
    with dns_cluster(rendered, tmp_path) as cluster:
        start_master(cluster)
        for pod in rendered.workers:
            cluster.start_ready(pod)
        master = cluster.containers[rendered.master.name]
        rank_and_host = "mpiexec -n 3 bash -c 'echo $OMPI_COMM_WORLD_RANK $(hostname)'"
        result = exec_in(master, ["bash", "-c", f"kompi-wait 2 --timeout 60 && {rank_and_host}"])
        lines = cluster.master_hostfile().read_text().splitlines()
    assert result.returncode == 0, result.stderr
    assert lines[0] == f"{rendered.master.fqdn} slots=1"
    assert len(lines) == 3
    hosts = dict(line.split() for line in result.stdout.splitlines())
    assert hosts["0"] == rendered.master.name  # ranks fill the hostfile in order
    assert sorted(hosts.values()) == sorted([rendered.master.name, *(pod.name for pod in rendered.workers)])


def test_hostfile_follows_scaling_joins_within_two_seconds_leaves_within_four(
    images: dict[str, str], tmp_path: Path
) -> None:
    rendered = render_cluster(images["ompi4"], workers=4, run_as_root=False)
    latencies: list[tuple[str, float]] = []
    with dns_cluster(rendered, tmp_path) as cluster:
        start_master(cluster)
        workers = rendered.workers
        for pod in workers:
            cluster.start(pod)
        path = cluster.master_hostfile()

        def change(label: str, changed_at: float, ordinals: list[int]) -> None:
            seen = wait_for_file(path, hostfile(cluster, ordinals), timeout=5)
            latencies.append((label, seen - changed_at))

        from tests.images.pod_like import wait_ready

        for pod in workers:
            wait_ready(cluster.containers[pod.name], pod.container)
        ready: list[int] = []
        for ordinal in (0, 1):  # scale to 2
            ready.append(ordinal)
            change(f"+{ordinal}", cluster.dns.publish(workers[ordinal].fqdn, cluster.address(workers[ordinal])), ready)
        for ordinal in (2, 3):  # scale to 4
            ready.append(ordinal)
            change(f"+{ordinal}", cluster.dns.publish(workers[ordinal].fqdn, cluster.address(workers[ordinal])), ready)
        ready.remove(1)  # worker-1 killed mid-way
        change("kill 1", cluster.kill(workers[1]), ready)
        for ordinal in (3, 2):  # scale to 1
            ready.remove(ordinal)
            change(f"-{ordinal}", cluster.kill(workers[ordinal]), ready)
        assert path.read_text() == hostfile(cluster, [0])
    figures = ", ".join(f"{label}: {seconds:.2f}s" for label, seconds in latencies)
    print(f"\nhostfile convergence after each DNS change: {figures}")
    print(f"p50 {statistics.median(s for _, s in latencies):.2f}s, max {max(s for _, s in latencies):.2f}s")
    assert all(seconds < (LEAVE_LIMIT if label[0] in "-k" else JOIN_LIMIT) for label, seconds in latencies), figures
    assert min(seconds for label, seconds in latencies if label[0] in "-k") >= 1.5, figures  # not at the first denial


def test_wait_names_a_worker_that_never_becomes_ready(images: dict[str, str], tmp_path: Path) -> None:
    rendered = render_cluster(images["ompi4"], workers=4, run_as_root=False)
    timeout = 3
    with dns_cluster(rendered, tmp_path) as cluster:
        start_master(cluster)
        for pod in rendered.workers[:3]:
            cluster.start_ready(pod)  # worker-3 never does
        script = f"s=$(date +%s.%N); kompi-wait 4 --timeout {timeout}; rc=$?; echo END $rc $s $(date +%s.%N)"
        result = podman("exec", cluster.containers[rendered.master.name], "bash", "-c", script, check=False)
    _, rc, started, ended = next(line for line in result.stdout.splitlines() if line.startswith("END")).split()
    elapsed = float(ended) - float(started)
    print(f"\nkompi-wait gave up after {elapsed:.2f}s (timeout {timeout}s): {result.stderr.strip()}")
    assert rc == "1"
    assert "mpi-worker-3 (not ready in DNS)" in result.stderr
    assert not any(f"mpi-worker-{o} " in result.stderr for o in range(3))
    assert timeout <= elapsed <= timeout + 1


def render_one_shot(
    image: str, command: list[str], one_shot: dict[str, object] | None = None
) -> tuple[RenderedCluster, dict[str, object]]:
    repository, tag = image.rsplit(":", 1)
    raw = {
        "kompi:clusterName": "mpi",
        "kompi:namespace": NAMESPACE,
        "kompi:workers": "2",
        "kompi:image": repository,
        "kompi:imageTag": tag,
        "kompi:imagePullPolicy": "Never",
        "kompi:oneShot": json.dumps({"enabled": True, "command": command, "timeoutSeconds": 60, **(one_shot or {})}),
    }
    config = load_config(raw)
    names = cluster_names(config)
    files = identity_files(os.urandom(SEED_BYTES), os.urandom(SEED_BYTES), names.cluster, names.known_host_patterns())
    objects = build_cluster(config, files.as_secret_data())
    *rbac, job = [item.manifest for item in objects.master]
    assert [m["kind"] for m in rbac] == ["ServiceAccount", "Role", "RoleBinding"]
    assert job["kind"] == "Job"
    spec = dict(job["spec"]["template"]["spec"])
    assert spec.pop("restartPolicy") == "Never" and job["spec"]["backoffLimit"] == 0
    assert spec.pop("serviceAccountName") == "mpi-oneshot"
    pod_name = "mpi-master-x7k2p"  # a Job's pod: generated name, no subdomain
    master = Pod(pod_name, pod_name, {**spec, "hostname": pod_name})
    workers = statefulset_pods(objects.workers[0].manifest, names)
    rendered = RenderedCluster(names, secret_files([item.manifest for item in objects.ssh]), workers, master)
    return rendered, job


@dataclass
class OneShotRun:
    code: int
    termination: str
    calls: list[dict[str, Any]]
    logs: str


def run_one_shot(
    image: str,
    command: list[str],
    tmp_path: Path,
    *,
    stop_while_running: bool = False,
    stop_after: str = "kompi: running:",
    one_shot: dict[str, object] | None = None,
) -> OneShotRun:
    """The one-shot Job's pod against 2 workers and a fake API server; optionally stopped mid-command (or
    once its log says ``stop_after``). ``one_shot``: more kompi:oneShot keys (e.g. restarts)."""
    rendered, _job = render_one_shot(image, command, one_shot)
    token = os.urandom(16).hex()
    sa_dir = tmp_path / "serviceaccount"
    sa_dir.mkdir(parents=True)
    for name, text in {"token": token, "namespace": NAMESPACE, "ca.crt": ""}.items():
        (sa_dir / name).write_text(text)
        (sa_dir / name).chmod(0o644)
    termination = tmp_path / "termination-log"
    termination.write_text("")
    termination.chmod(0o666)
    with dns_cluster(rendered, tmp_path / "pods") as cluster:
        for pod in rendered.workers:
            cluster.start_ready(pod)
        api = FakeKubeApi(cluster.gateway, token)  # on the gateway, which exists once a pod runs
        with api.serving() as url:
            master = rendered.master
            container = dict(master.container)
            container["env"] = [*container["env"], {"name": "KOMPI_KUBE_API", "value": url}]
            spec = {**master.spec, "containers": [container]}
            mounts = [
                f"type=bind,source={sa_dir},destination=/var/run/secrets/kubernetes.io/serviceaccount,ro=true",
                f"type=bind,source={termination},destination=/dev/termination-log",
            ]
            name = cluster.start(replace(master, spec=spec), spec, mounts)
            if stop_while_running:
                deadline = time.monotonic() + 60
                while stop_after not in podman("logs", name, check=False).stderr:
                    assert time.monotonic() < deadline, "the command never started"
                    time.sleep(0.2)
                podman("stop", "-t", "20", name)
            code = int(podman("wait", name, timeout=120).stdout.strip())
            logs = podman("logs", name, check=False)
    assert all(call["authorized"] for call in api.calls)
    assert {call["path"] for call in api.calls} == {"/apis/apps/v1/namespaces/hpc/statefulsets/mpi-worker/scale"}
    assert {call["contentType"] for call in api.calls} == {"application/merge-patch+json"}
    return OneShotRun(code, termination.read_text(), api.calls, logs.stdout + logs.stderr)


@pytest.mark.parametrize("outcome", ["success", "failure"])
def test_one_shot_runs_once_and_releases_only_on_success(images: dict[str, str], outcome: str, tmp_path: Path) -> None:
    command = ["mpiexec", "hostname"] if outcome == "success" else ["sh", "-c", "mpiexec hostname && exit 3"]
    run = run_one_shot(images["ompi5"], command, tmp_path, one_shot={"restarts": 0})
    print(f"\n{outcome}: exit {run.code}; termination message {run.termination.strip()!r}; API calls {run.calls}")
    replicas = [call["body"]["spec"]["replicas"] for call in run.calls]
    hosts = sorted(line for line in run.logs.splitlines() if line.startswith("mpi-worker-"))
    assert hosts == ["mpi-worker-0", "mpi-worker-1"], run.logs
    if outcome == "success":
        assert run.code == 0
        assert run.termination.startswith("exit code 0")
        assert replicas == [2, 0]  # workers ensured, then released
    else:
        assert run.code == 3
        assert run.termination.startswith("exit code 3")
        assert "restart" not in run.logs  # kompi:oneShot.restarts = 0: the first failure is final
        assert replicas == [2]  # nothing released


def test_one_shot_restarts_a_failed_command_which_then_succeeds(images: dict[str, str], tmp_path: Path) -> None:
    # Fails on its first attempt only (a marker file in the master), as a run resumed from a checkpoint would not.
    script = "mpiexec hostname && if [ -e /tmp/tried ]; then exit 0; fi; touch /tmp/tried; exit 7"
    run = run_one_shot(images["ompi5"], ["sh", "-c", script], tmp_path, one_shot={"restarts": 2})
    print(f"\nexit {run.code}; termination message {run.termination.strip()!r}")
    assert run.code == 0, run.logs
    assert run.termination == "exit code 0: command succeeded after 1 restart; workers released\n"
    assert "kompi: restart 1 of 2 after exit code 7" in run.logs
    assert run.logs.count("kompi: running:") == 2  # waited for the workers again, then ran the same command
    hosts = sorted(line for line in run.logs.splitlines() if line.startswith("mpi-worker-"))
    assert hosts == ["mpi-worker-0", "mpi-worker-0", "mpi-worker-1", "mpi-worker-1"], run.logs
    assert [call["body"]["spec"]["replicas"] for call in run.calls] == [2, 0]  # released after the success only


def test_one_shot_fails_with_the_budget_named_when_every_restart_failed(images: dict[str, str], tmp_path: Path) -> None:
    run = run_one_shot(images["ompi5"], ["sh", "-c", "mpiexec hostname; exit 5"], tmp_path, one_shot={"restarts": 1})
    print(f"\nexit {run.code}; termination message {run.termination.strip()!r}")
    assert run.code == 5
    assert run.termination == (
        "exit code 5: command failed after 1 restart (kompi:oneShot.restarts = 1, spent); workers kept\n"
    )
    assert "kompi: restart 1 of 1 after exit code 5" in run.logs
    assert run.logs.count("kompi: running:") == 2
    assert [call["body"]["spec"]["replicas"] for call in run.calls] == [2]  # nothing released


def test_one_shot_passes_sigterm_to_a_running_command(images: dict[str, str], tmp_path: Path) -> None:
    # A command that would outlive the stop timeout unless the signal reaches it.
    run = run_one_shot(images["ompi5"], ["sleep", "600"], tmp_path, stop_while_running=True)
    assert run.code == 143
    assert run.termination.startswith("exit code 143: terminated while running")
    assert [call["body"]["spec"]["replicas"] for call in run.calls] == [2]  # nothing released


def test_one_shot_stopped_before_a_restart_does_not_restart(images: dict[str, str], tmp_path: Path) -> None:
    # SIGTERM in the pause before a restart (as when the pod is deleted): the run ends, nothing starts again.
    run = run_one_shot(
        images["ompi5"],
        ["sh", "-c", "exit 4"],
        tmp_path,
        stop_while_running=True,
        stop_after="kompi: restart 1 of 3 after exit code 4",
        one_shot={"restarts": 3},
    )
    assert run.code == 143, run.logs
    assert run.termination.startswith("exit code 143: terminated\n")
    assert run.logs.count("kompi: running:") == 1
    assert [call["body"]["spec"]["replicas"] for call in run.calls] == [2]  # nothing released
