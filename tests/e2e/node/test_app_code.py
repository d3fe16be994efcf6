"""kompi:appCode on the real node: kompi-fetch-code, the init container from kompi's image, fetches from a git
server on the node's network (tests/git_server.py), a public repository over git:// and a private one over
ssh with a deploy key and the server's pinned host key, into master and workers; an MPI job runs the
fetched program. What cannot be fetched fails `up` naming the repository and the reason; a server that is
down for the first tries is waited for."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl, wait_until
from tests.e2e.node.mpi import PROGRAM, exec_in
from tests.e2e.project import Project
from tests.git_server import GitServer, ssh_keypair

NAMESPACE = "kompi-code"
MASTER = "kompi-dev-master-0"
SECRET = "deploy-key"
FLAVOR = "ompi5"
GIT_PORT, SSH_PORT = 9418, 2022
# `up` reports a fetcher that exits CANNOT_SUCCEED_EXIT at once (without it, after a minute of the crash
# loop, kube/rollout.GIVE_UP_SECONDS): what remains is `up` itself and the pod's start, three at once here
REPORTED_WITHIN_SECONDS = 120


@pytest.fixture(scope="module")
def git_server(real_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitServer]:
    """Listens on the node's address inside its network namespace, where pods reach it."""
    node = real_cluster.node
    root = tmp_path_factory.mktemp("node-git-server")
    with GitServer(root, node.addresses.node_ip, GIT_PORT, SSH_PORT, prefix=node.in_netns) as server:
        server.add_repository("public-app", {"src/allreduce.py": PROGRAM, "README": "public\n"}, tag="v1")
        server.add_repository("private-app", {"allreduce.py": PROGRAM}, private=True)
        server.start()
        yield server


def deploy_key_secret(
    kubectl: Kubectl,
    server: GitServer,
    key: bytes | None = None,
    known_hosts: str | None = None,
    namespace: str = NAMESPACE,
) -> None:
    """The Secret kompi:appCode[].sshKeySecret names: the deploy key under 'ssh', the host's key under 'known_hosts'."""
    data = {
        "ssh": key if key is not None else server.deploy_key.read_bytes(),
        "known_hosts": (known_hosts if known_hosts is not None else server.known_hosts()).encode(),
    }
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SECRET, "namespace": namespace},
        "data": {name: base64.b64encode(value).decode() for name, value in data.items()},
    }
    kubectl.run("apply", "-f", "-", input_text=json.dumps(secret))


@pytest.fixture
def code_stack(stack_namespace, node_project, images: dict[str, str]) -> Callable[..., Project]:
    """A dev stack with ``app_code`` in ``namespace``, made beforehand (for the deploy-key Secret)."""

    def make(app_code: list[dict[str, object]], namespace: str = NAMESPACE) -> Project:
        stack_namespace(namespace)
        tag = images[FLAVOR].split(":", 1)[1]
        settings = {"namespace": namespace, "createNamespace": False, "appCode": app_code}
        return node_project("dev", tag, directory=namespace, **settings)

    return make


def public_app(server: GitServer, **settings: object) -> dict[str, object]:
    return {"name": "public", "repo": server.git_url("public-app"), "ref": "v1", "subPath": "src",
            "mountPath": "/app"} | settings  # fmt: skip


def private_app(server: GitServer, **settings: object) -> dict[str, object]:
    return {"name": "private", "repo": server.ssh_url("private-app"), "ref": "main", "mountPath": "/private",
            "sshKeySecret": SECRET, "retries": 1, "retryWaitSeconds": 2} | settings  # fmt: skip


def assert_job_runs(kubectl: Kubectl, master: str, program: str) -> None:
    """The fetched allreduce program over both workers, each rank with the known sum."""
    job = exec_in(kubectl, NAMESPACE, master, "mpiexec", "-n", "2", "python3", program)
    reports = [json.loads(line) for line in job.splitlines() if line.startswith("{")]
    assert {r["hostname"] for r in reports} == {"kompi-dev-worker-0", "kompi-dev-worker-1"}, job
    assert [r["sum"] for r in reports] == [3, 3], job


def test_public_and_private_code_reach_every_pod_and_an_mpi_job_runs_it(
    code_stack, node_kubectl: Kubectl, git_server: GitServer
) -> None:
    project = code_stack([public_app(git_server), private_app(git_server)])
    deploy_key_secret(node_kubectl, git_server)

    out = project.last_json(project.kompi("up"))

    master = out["masterPod"]
    for pod in (master, "kompi-dev-worker-0", "kompi-dev-worker-1"):
        listing = exec_in(node_kubectl, NAMESPACE, pod, "sh", "-c", "ls /app /private; touch /app/x 2>&1 || true")
        assert listing.split()[:3] == ["/app:", "allreduce.py", "/private:"], listing
        assert "Read-only file system" in listing  # the code is mounted read-only
    for path in ("/app/allreduce.py", "/private/allreduce.py"):
        assert_job_runs(node_kubectl, master, path)


def test_code_that_cannot_be_fetched_fails_up_naming_the_repository_and_the_reason(
    code_stack, node_kubectl: Kubectl, git_server: GitServer, tmp_path: Path
) -> None:
    """A ref that does not exist, a wrong host key, a wrong deploy key: each stack in a namespace of its own,
    their `up`s at once (each waits about a minute on the crash loop before it gives up)."""
    other_host = ssh_keypair(tmp_path / "other-host")
    ssh_keypair(tmp_path / "stranger")
    stranger = (tmp_path / "stranger").read_bytes()
    cases = {
        "kompi-code-ref": (public_app(git_server, ref="release-9"), "no such branch, tag or commit", {}),
        "kompi-code-host": (
            private_app(git_server),
            "the git host's key is not the one in known_hosts",
            {"known_hosts": f"[{git_server.host}]:{SSH_PORT} {other_host}\n"},
        ),
        "kompi-code-key": (private_app(git_server), "the git server refused the deploy key", {"key": stranger}),
    }
    projects = {}
    for namespace, (app, _, secret) in cases.items():
        projects[namespace] = code_stack([app], namespace)
        if app.get("sshKeySecret"):
            deploy_key_secret(node_kubectl, git_server, namespace=namespace, **secret)

    with ThreadPoolExecutor(len(projects)) as pool:
        running = {
            namespace: pool.submit(p.up_that_fails, REPORTED_WITHIN_SECONDS) for namespace, p in projects.items()
        }
        failed = {namespace: future.result() for namespace, future in running.items()}

    for namespace, (app, reason, _) in cases.items():
        said = f"kompi-fetch-code: cannot fetch {app['repo']} at {app['ref']}: {reason}"
        assert said in failed[namespace], failed[namespace][-3000:]  # the pod's termination message, in up's error
        assert f"container fetch-{app['name']}: CrashLoopBackOff" in failed[namespace]
        assert "pods cannot start (a failure no restart can mend)" in failed[namespace]  # not after a minute


def test_a_git_server_down_for_the_first_tries_is_waited_for(
    code_stack, node_kubectl: Kubectl, git_server: GitServer
) -> None:
    """The server comes back once the master's fetcher has said that a try failed (a fixed delay raced the
    pod's start on a loaded machine), and the fetch succeeds within the same container's retries."""
    project = code_stack([public_app(git_server, retries=20, retryWaitSeconds=3)])
    git_server.stop(["git"])
    failed_once = threading.Event()

    def start_after_a_failed_try() -> None:
        def fetcher_failed() -> bool:
            log = node_kubectl.run("logs", "-n", NAMESPACE, MASTER, "-c", "fetch-public", check=False).stdout
            return "try 1 of 21 failed" in log

        try:
            wait_until("the master's fetcher to fail a try", fetcher_failed, timeout=240)
            failed_once.set()
        finally:
            git_server.start(which=["git"])

    back = threading.Thread(target=start_after_a_failed_try)
    back.start()
    try:
        out = project.last_json(project.kompi("up"))
    finally:
        back.join()

    assert failed_once.is_set()  # it was down, and the fetcher tried again
    log = node_kubectl.run("logs", "-n", NAMESPACE, out["masterPod"], "-c", "fetch-public").stdout
    assert "try 1 of 21 failed" in log, log  # in the container that then succeeded: no restart was needed
    assert "commit " in log.splitlines()[-1]
    assert_job_runs(node_kubectl, out["masterPod"], "/app/allreduce.py")
