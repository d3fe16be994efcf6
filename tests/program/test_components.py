"""The Pulumi program's structure: components, parenting, secrets, ordering and outputs."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from kompi_components import contract, program
from kompi_components.components import KompiCluster
from tests.pulumi_mocks import RecordingMocks, RecordingMonitor, is_secret
from tests.stacks import EVERY_FEATURE, as_config


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
    statefulset = mocks.named("kubernetes:apps/v1:StatefulSet", f"statefulset-{statefulset_name}")
    dependencies = {dep.split("::")[-1] for dep in statefulset.dependencies}
    expected = {
        "namespace-kompi",
        "secret-kompi-ssh",
        "service-kompi",
        "networkpolicy-kompi",
        "podgroup-kompi",  # the default gang mode, scheduler-plugins
    }
    assert expected <= dependencies
