"""The Pulumi program's structure: components, parenting, secrets, ordering and outputs."""

from __future__ import annotations

import asyncio
from typing import Any

import pulumi
import pytest

from kompi_components import contract, program
from kompi_components.api import KompiCluster
from kompi_components.components.rollout import _Provider as RolloutProvider
from tests.pulumi_mocks import RecordingMocks, RecordingMonitor, is_secret
from tests.stacks import EVERY_FEATURE, REPO, as_config


def _run(config: dict[str, str]) -> tuple[RecordingMocks, list[KompiCluster], dict[str, Any]]:
    """Run the program; return mocks, the cluster and its resolved outputs."""
    mocks = RecordingMocks()
    pulumi.runtime.set_mocks(mocks, project="kompi", stack="test", preview=False, monitor=RecordingMonitor(mocks))
    clusters: list[KompiCluster] = []
    outputs: dict[str, Any] = {}

    @pulumi.runtime.test
    def body() -> pulumi.Output[None]:
        pulumi.runtime.set_all_config(config)
        cluster = program.run()
        clusters.append(cluster)
        fields = ["namespace", "master_pod", "workers", "total_slots", "hostfile", "first_job", "ssh_public_key"]
        return pulumi.Output.all(*[getattr(cluster, f) for f in fields]).apply(
            lambda values: outputs.update(zip(fields, values, strict=True))
        )

    body()
    return mocks, clusters, outputs


def _descendants(resource: pulumi.Resource) -> list[pulumi.Resource]:
    found: list[pulumi.Resource] = []
    for child in resource._childResources:
        found += [child, *_descendants(child)]
    return found


def test_every_resource_is_a_descendant_of_the_cluster_component() -> None:
    mocks, (cluster,), _ = _run(as_config(EVERY_FEATURE))
    descendants = _descendants(cluster)
    custom = [r for r in descendants if isinstance(r, pulumi.CustomResource)]
    registered_custom = [r for r in mocks.registrations if not r.type_.startswith("kompi:")]
    assert len(custom) == len(registered_custom) > 0
    components = {type(r).__name__ for r in descendants if isinstance(r, pulumi.ComponentResource)}
    assert components == {"SshIdentity", "ObjectGroup"}


def test_components_have_kompi_type_tokens_one_per_concept() -> None:
    mocks, _, _ = _run(as_config(EVERY_FEATURE))
    tokens = {r.type_ for r in mocks.of_type("kompi:")}
    assert tokens == {
        "kompi:index:Cluster",
        "kompi:index:SshIdentity",
        "kompi:index:Namespace",
        "kompi:index:Network",
        "kompi:index:GangScheduling",
        "kompi:index:Workers",
        "kompi:index:Master",
    }


def test_no_namespace_and_no_gang_components_when_not_asked_for() -> None:
    mocks, _, _ = _run({"kompi:createNamespace": "false"})
    tokens = {r.type_ for r in mocks.of_type("kompi:")}
    assert "kompi:index:Namespace" not in tokens
    assert "kompi:index:GangScheduling" not in tokens
    assert not mocks.of_type("kubernetes:core/v1:Namespace")


def test_ssh_secret_data_reaches_pulumi_as_a_secret_and_keys_derive_from_random_bytes() -> None:
    mocks, _, _ = _run({})
    (secret,) = mocks.of_type("kubernetes:core/v1:Secret")
    assert is_secret(secret.inputs["stringData"])
    seeds = mocks.of_type("random:index/randomBytes:RandomBytes")
    assert len(seeds) == 2
    assert all(seed.inputs["keepers"] == {"keyVersion": "1"} for seed in seeds)


def test_rotation_changes_the_seeds_keepers_so_pulumi_replaces_them() -> None:
    mocks, _, _ = _run({"kompi:sshKeyVersion": "2"})
    seeds = mocks.of_type("random:index/randomBytes:RandomBytes")
    assert {tuple(seed.inputs["keepers"].items()) for seed in seeds} == {(("keyVersion", "2"),)}


def test_stack_outputs() -> None:
    _, _, outputs = _run(as_config({"clusterName": "train", "namespace": "ml", "workers": 3, "gpusPerWorker": 4}))
    assert outputs["namespace"] == "ml"
    assert outputs["master_pod"] == "train-master-0"
    assert outputs["workers"] == 3
    assert outputs["total_slots"] == 12
    assert outputs["hostfile"] == contract.HOSTFILE
    assert outputs["first_job"] == ("kubectl exec -n ml train-master-0 -c mpi -- mpiexec -n 12 hostname")
    assert outputs["ssh_public_key"].startswith("ecdsa-sha2-nistp256 ")


def test_every_resource_has_a_kompi_parent_and_the_cluster_is_top_level() -> None:
    mocks, _, _ = _run(as_config(EVERY_FEATURE))
    urns = {r.urn: r for r in mocks.registrations}
    (root,) = mocks.of_type("kompi:index:Cluster")
    for registration in mocks.registrations:
        if registration is root:
            continue
        assert registration.parent in urns, registration.name
        assert urns[registration.parent].type_.startswith("kompi:index:"), registration.name


@pytest.mark.parametrize("statefulset_name", ["kompi-worker", "kompi-master"])
def test_pods_wait_for_namespace_ssh_secret_and_network(statefulset_name: str) -> None:
    mocks, _, _ = _run({"kompi:gangScheduling": '{"enabled": true}'})
    statefulset = mocks.named("kubernetes:apps/v1:StatefulSet", f"kompi-statefulset-{statefulset_name}")
    dependencies = {dep.split("::")[-1] for dep in statefulset.dependencies}
    expected = {
        "kompi-namespace-kompi",
        "kompi-secret-kompi-ssh",
        "kompi-service-kompi",
        "kompi-networkpolicy-kompi",
        "kompi-podgroup-kompi",  # the default gang mode, scheduler-plugins
    }
    assert expected <= dependencies


DYNAMIC = "pulumi-python:dynamic:Resource"


@pytest.mark.parametrize("role", ["worker", "master"])
def test_each_statefulset_is_rolled_by_its_own_step_after_it_is_updated(role: str) -> None:
    mocks, _, _ = _run({})
    statefulset = mocks.named("kubernetes:apps/v1:StatefulSet", f"kompi-statefulset-kompi-{role}")
    rollout = mocks.named(DYNAMIC, f"kompi-kompi-{role}-rollout")
    assert statefulset.urn in rollout.dependencies
    assert rollout.parent == statefulset.parent  # in the same group
    assert (rollout.inputs["namespace"], rollout.inputs["statefulset"]) == ("kompi", f"kompi-{role}")
    # pulumi-kubernetes waits only for the controller to take up the spec: the rollout step does the rest
    assert statefulset.inputs["metadata"]["annotations"] == {
        "pulumi.com/waitFor": "jsonpath={.status.observedGeneration}"
    }
    assert is_secret(rollout.inputs["kubeconfig"])


def test_the_rollout_acts_on_a_new_template_and_not_on_a_new_label() -> None:
    def worker_rollout(config: dict[str, str]) -> dict[str, Any]:
        mocks, _, _ = _run(config)
        return mocks.named(DYNAMIC, "kompi-kompi-worker-rollout").inputs

    base = worker_rollout({})
    assert worker_rollout({"kompi:imageTag": "5.0.11-bookworm-0.1.0"})["template"] != base["template"]
    assert worker_rollout({"kompi:workers": "5"})["replicas"] == 5
    assert worker_rollout({"kompi:workers": "5"})["template"] == base["template"]


def test_the_rollout_reaches_the_cluster_the_stack_names() -> None:
    mocks, _, _ = _run({"kubernetes:context": "training", "kubernetes:kubeconfig": "/etc/kube/config"})
    rollout = mocks.named(DYNAMIC, "kompi-kompi-worker-rollout")
    assert rollout.inputs["context"] == "training"
    assert rollout.inputs["kubeconfig"]["value"] == "/etc/kube/config"


def test_one_shot_rbac_exists_before_the_job_that_uses_it() -> None:
    one_shot = {"oneShot": {"enabled": True, "command": "mpiexec hostname"}}
    mocks, _, _ = _run(as_config(one_shot))
    job = mocks.named("kubernetes:batch/v1:Job", "kompi-job-kompi-master")
    rbac = [
        mocks.named("kubernetes:core/v1:ServiceAccount", "kompi-serviceaccount-kompi-oneshot"),
        mocks.named("kubernetes:rbac.authorization.k8s.io/v1:Role", "kompi-role-kompi-oneshot"),
        mocks.named("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "kompi-rolebinding-kompi-oneshot"),
    ]
    assert {registration.urn for registration in rbac} <= set(job.dependencies)


@pytest.mark.parametrize(("release", "restores"), [(True, 3), (False, None)])
def test_a_one_shot_runs_workers_are_scaled_back_by_their_rollout_only_where_the_job_releases_them(
    release: bool, restores: int | None
) -> None:
    one_shot = {"enabled": True, "command": "mpiexec hostname", "releaseWorkers": release}
    mocks, _, _ = _run(as_config({"workers": 3, "oneShot": one_shot}))
    assert mocks.named(DYNAMIC, "kompi-kompi-worker-rollout").inputs.get("restoreReplicas") == restores


@pytest.mark.parametrize("queue", ["team-a", None])
def test_a_queued_one_shot_runs_worker_rollout_reads_its_job_and_follows_each_new_one(queue: str | None) -> None:
    """Under kompi:queue the workers' rollout comes after the Job, names it and takes its uid: a new Job (a changed
    run, or `pulumi up --replace` of the same one) is a new run that the rollout acts on."""
    one_shot = {"enabled": True, "command": "mpiexec hostname", "releaseWorkers": True}
    mocks, _, _ = _run(as_config({"oneShot": one_shot} | ({"queue": queue} if queue else {})))
    rollout = mocks.named(DYNAMIC, "kompi-kompi-worker-rollout")
    job = mocks.named("kubernetes:batch/v1:Job", "kompi-job-kompi-master")
    if queue is None:
        assert "launcherJob" not in rollout.inputs and "run" not in rollout.inputs
        assert job.urn not in rollout.dependencies
        return
    assert rollout.inputs["launcherJob"] == "kompi-master" and "run" in rollout.inputs  # (the mocks make no uid)
    assert job.urn in rollout.dependencies


def test_a_new_job_changes_the_rollout_and_an_upgrade_alone_does_not() -> None:
    olds = {"namespace": "ns", "statefulset": "c-worker", "replicas": 2, "template": "t", "launcherJob": "c-master"}
    provider = RolloutProvider()
    assert not provider.diff("id", olds, olds | {"run": "uid-1"}).changes  # state from before: no roll
    assert not provider.diff("id", olds | {"run": "uid-1"}, olds | {"run": "uid-1"}).changes
    assert provider.diff("id", olds | {"run": "uid-1"}, olds | {"run": "uid-2"}).changes


def test_the_one_shot_job_docs_name_for_replace_is_the_name_the_program_registers() -> None:
    """docs/one-shot.md's `pulumi up --replace` names the Job's resource with CLUSTER for the cluster's name."""
    mocks, _, _ = _run(as_config({"clusterName": "demo", "oneShot": {"enabled": True, "command": "mpiexec hostname"}}))
    (job,) = [registration for registration in mocks.registrations if registration.type_ == "kubernetes:batch/v1:Job"]
    documented = job.name.replace("demo", "CLUSTER")
    assert documented == "CLUSTER-job-CLUSTER-master"  # as the docs spell it out
    assert f"kubernetes:batch/v1:Job {documented}>" in (REPO / "docs" / "one-shot.md").read_text()


def test_the_namespace_and_master_outputs_depend_on_the_objects_they_name() -> None:
    mocks, (cluster,), _ = _run({})
    namespace = mocks.named("kubernetes:core/v1:Namespace", "kompi-namespace-kompi")
    rollout = mocks.named(DYNAMIC, "kompi-kompi-master-rollout")

    async def dependencies(output: pulumi.Output[Any]) -> set[str]:
        return {await resource.urn.future() for resource in await output.resources()}

    loop = asyncio.get_event_loop()
    assert namespace.urn in loop.run_until_complete(dependencies(cluster.namespace))
    assert rollout.urn in loop.run_until_complete(dependencies(cluster.master_pod))
