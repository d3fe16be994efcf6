"""KompiCluster as programs compose it: typed args, Outputs for the namespace and the image, the provider
from opts, two clusters in one stack, the names of kompi 0.1.0 carried over by aliases."""

from __future__ import annotations

import asyncio
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from kompi_components import api
from kompi_components.api import ClusterArgs, InvalidArgs, KompiCluster
from kompi_components.components import args
from kompi_components.components.inputs import SHAPE_VALUES
from kompi_components.components.object_inputs import ShapeMismatch, _same_object
from kompi_components.config.args_source import args_module_source
from tests.golden import golden_objects
from tests.program.parity import by_identity
from tests.pulumi_mocks import (
    KUBERNETES_PREFIX,
    RecordingMocks,
    is_secret,
    registered_manifests,
    run_body,
    unwrap_secrets,
)
from tests.stacks import REPO

DYNAMIC = "pulumi-python:dynamic:Resource"
# tests/stacks.COMPONENT written as a program writes ClusterArgs (snake_case): kept as a second spelling on
# purpose, since deriving it with kompi's own key conversion would test the conversion against itself
TRAIN: ClusterArgs = {
    "namespace": "ml",
    "create_namespace": False,
    "workers": 3,
    "image": "registry.example.com/ml/kompi",
    "image_tag": "4.1.4-bookworm-0.1.0",
    "worker_pod": {"node_selector": {"pool": "gpu"}, "resources": {"requests": {"cpu": "2"}}},
    "data_volumes": [{"name": "train", "size": "1Gi", "mount_path": "/train", "retain": True}],
    "data_preparation": {"command": ["python3", "/prepare.py"]},
}


# TRAIN's namespace and image as Outputs of other resources would give them
DEFERRED = {
    "namespace": pulumi.Output.from_input("ml"),
    "image": pulumi.Output.from_input("registry.example.com/ml/kompi"),
    "image_tag": pulumi.Output.from_input("4.1.4-bookworm-0.1.0"),
}


def _cluster(name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None) -> RecordingMocks:
    return run_body(lambda: KompiCluster(name, args, opts))


def _manifests(mocks: RecordingMocks) -> dict[tuple[str, str], dict[str, Any]]:
    return by_identity(registered_manifests(mocks))


def test_the_args_module_is_the_one_generated_from_the_config_schema() -> None:
    text = (REPO / "kompi_components" / "components" / "args.py").read_text()
    assert text == args_module_source(), (
        "run: python -m kompi_components.config.args_source > kompi_components/components/args.py"
    )


def test_the_api_exports_every_generated_args_class() -> None:
    """A program types each nested value with the class of its key (host_network: HostNetworkSettingsArgs, ...),
    so the public API holds every class args.py defines, as args.py's own."""
    generated = {
        name: value
        for name, value in vars(args).items()
        if isinstance(value, type) and value.__module__ == args.__name__
    }
    assert "HostNetworkSettingsArgs" in generated and "ClusterArgs" in generated
    assert set(generated) <= set(api.__all__)
    assert all(getattr(api, name) is value for name, value in generated.items())


def test_plain_args_create_the_golden_objects_of_the_same_config() -> None:
    assert _manifests(_cluster("train", TRAIN)) == by_identity(golden_objects("component"))


def test_namespace_and_image_from_outputs_create_the_same_objects_as_plain_values() -> None:
    plain = _manifests(_cluster("train", TRAIN))
    mocks = _cluster("train", TRAIN | DEFERRED)  # type: ignore[arg-type]
    assert _manifests(mocks) == plain  # the data-preparation Job's hashed name included
    rollouts = {
        r.inputs["statefulset"]: r.inputs["namespace"] for r in mocks.of_type(DYNAMIC) if "statefulset" in r.inputs
    }
    assert rollouts == {"train-master": "ml", "train-worker": "ml"}
    (guard,) = [r for r in mocks.of_type(DYNAMIC) if "claims" in r.inputs]
    assert "PersistentVolumeClaim ml/train-data-train" in guard.inputs["claims"]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in (*_strings(key), *_strings(item))]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _shape_values_in(inputs: dict[str, Any]) -> list[str]:
    texts = _strings(unwrap_secrets(inputs))
    return [text for text in texts if any(shape in text for shape in SHAPE_VALUES.values())]


def test_no_input_is_made_from_the_shape_values_and_a_deferred_namespace_is_named_by_its_role() -> None:
    args = TRAIN | {"create_namespace": True, "data_volumes": [], "data_preparation": None}
    plain = _cluster("train", args)  # type: ignore[arg-type]
    deferred = _cluster("train", args | DEFERRED)  # type: ignore[arg-type]
    assert _manifests(deferred) == _manifests(plain)
    assert [(r.name, _shape_values_in(r.inputs)) for r in deferred.registrations if _shape_values_in(r.inputs)] == []
    (secret,) = deferred.of_type("kubernetes:core/v1:Secret")
    assert is_secret(secret.inputs["stringData"])  # read from the real objects, still a Pulumi secret
    names = {r.name for r in deferred.of_type(KUBERNETES_PREFIX)}
    assert names == {r.name for r in plain.of_type(KUBERNETES_PREFIX)} - {"train-namespace-ml"} | {"train-namespace"}


def _unknown() -> pulumi.Output[str]:
    """An Output whose value `pulumi preview` does not know (the name of a namespace it has yet to create)."""
    loop = asyncio.get_event_loop()
    value, known = loop.create_future(), loop.create_future()
    value.set_result(None)
    known.set_result(False)
    return pulumi.Output(set(), value, known)


def test_a_namespace_unknown_in_preview_registers_the_same_resources_with_unknown_fields() -> None:
    args = TRAIN | {"data_volumes": [], "data_preparation": None}
    known = run_body(lambda: KompiCluster("train", args | {"namespace": pulumi.Output.from_input("ml")}), preview=True)
    unknown = run_body(lambda: KompiCluster("train", args | {"namespace": _unknown()}), preview=True)
    assert sorted((r.type_, r.name) for r in unknown.registrations) == sorted(
        (r.type_, r.name) for r in known.registrations
    )
    (workers,) = [r for r in unknown.of_type("kubernetes:apps/v1:StatefulSet") if r.name.endswith("-worker")]
    assert workers.inputs["kind"] == "StatefulSet"
    assert isinstance(workers.inputs["metadata"]["namespace"], pulumi.output.Unknown)
    assert _shape_values_in(workers.inputs) == [], "no shape value stands in for the unknown namespace"


def test_the_ssh_host_key_is_trusted_for_the_namespace_known_during_up() -> None:
    mocks = _cluster("train", TRAIN | {"namespace": pulumi.Output.from_input("ml")})
    (secret,) = mocks.of_type("kubernetes:core/v1:Secret")
    known_hosts = unwrap_secrets(secret.inputs)["stringData"]["known_hosts"]
    assert "*.train.ml.svc.cluster.local" in known_hosts and "kompi-unknown" not in known_hosts


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("namespace", "Team.ML", 'invalid config kompi:namespace = "Team.ML": expected a DNS-1123 label'),
        ("image", "Registry/Kompi", "invalid config kompi:image = "),
    ],
)
def test_a_bad_value_known_during_up_fails_with_the_stack_configs_message(key: str, value: str, message: str) -> None:
    # (Pulumi's SDK wraps it: "While processing input ... has risen: <the message>")
    with pytest.raises(ValueError, match=f"has risen: {message}"):
        _cluster("train", TRAIN | {key: pulumi.Output.from_input(value)})  # type: ignore[misc]


def test_a_bad_plain_value_registers_nothing_and_says_what_stack_config_says() -> None:
    mocks = RecordingMocks()
    with pytest.raises(InvalidArgs, match=r"^invalid config kompi:workers = -1: expected a number >= 0$"):
        run_body(lambda: KompiCluster("train", TRAIN | {"workers": -1}), mocks)
    assert mocks.registrations == []


def test_nested_keys_take_the_config_spelling_too() -> None:
    camel = TRAIN | {"worker_pod": {"nodeSelector": {"pool": "gpu"}, "resources": {"requests": {"cpu": "2"}}}}
    assert _manifests(_cluster("train", camel)) == _manifests(_cluster("train", TRAIN))  # type: ignore[arg-type]


def test_an_output_where_a_plain_value_is_needed_is_refused() -> None:
    with pytest.raises(InvalidArgs, match=r"^invalid config kompi:workers = <an Output>: expected a plain value"):
        _cluster("train", TRAIN | {"workers": pulumi.Output.from_input(2)})  # type: ignore[dict-item]


def test_the_cluster_name_defaults_to_the_resource_name() -> None:
    manifests = _manifests(_cluster("eval", {"namespace": "ml", "create_namespace": False}))
    assert ("StatefulSet", "eval-worker") in manifests


def test_two_clusters_of_one_name_in_two_namespaces_live_in_one_stack() -> None:
    def program() -> None:
        KompiCluster("train", {"cluster_name": "kompi", "namespace": "team-a"})
        KompiCluster("eval", {"cluster_name": "kompi", "namespace": "team-b"})

    mocks = run_body(program)
    urns = [r.urn for r in mocks.registrations]
    assert len(urns) == len(set(urns))
    namespaces = [r.inputs["metadata"]["namespace"] for r in mocks.of_type("kubernetes:apps/v1:StatefulSet")]
    assert sorted(namespaces) == ["team-a", "team-a", "team-b", "team-b"]


def test_every_kubernetes_object_uses_the_provider_from_opts() -> None:
    def program() -> None:
        provider = k8s.Provider("their-cluster", kubeconfig="apiVersion: v1\nkind: Config\n")
        KompiCluster("train", TRAIN, pulumi.ResourceOptions(provider=provider))

    mocks = run_body(program)
    objects = [r for r in mocks.of_type(KUBERNETES_PREFIX) if r.type_ != "pulumi:providers:kubernetes"]
    assert objects and {r.provider.split("::")[3] for r in objects} == {"their-cluster"}


def test_stacks_made_by_kompi_0_1_0_keep_their_objects_through_aliases() -> None:
    mocks = _cluster("kompi-dev", {"cluster_name": "kompi-dev", "namespace": "kompi-dev"})
    objects = mocks.of_type(KUBERNETES_PREFIX)
    assert {r.name: r.aliases for r in objects}["kompi-dev-statefulset-kompi-dev-worker"] == [
        "statefulset-kompi-dev-worker"
    ]
    assert all(r.aliases == [f"{r.inputs['kind'].lower()}-{r.inputs['metadata']['name']}"] for r in objects)
    steps = {r.name: r.aliases for r in mocks.of_type(DYNAMIC) if "statefulset" in r.inputs}
    assert steps == {
        "kompi-dev-kompi-dev-master-rollout": ["kompi-dev-master-rollout"],
        "kompi-dev-kompi-dev-worker-rollout": ["kompi-dev-worker-rollout"],
        # new since: nothing to carry over
        "kompi-dev-kompi-dev-master-handover": [],
        "kompi-dev-kompi-dev-worker-handover": [],
    }
    # a cluster that 0.1.0 could not have made (named apart from its clusterName) has no alias to claim
    other = _cluster("train", {"cluster_name": "kompi-dev", "namespace": "kompi-dev"})
    assert all(r.aliases == [] for r in other.registrations)


def test_host_network_args_create_the_golden_objects_of_the_same_config() -> None:
    args = TRAIN | {"host_network": {"enabled": True, "mpi_interfaces": "ens5"}, "network_policy": {"enabled": False}}
    manifests = _manifests(_cluster("train", args))  # type: ignore[arg-type]
    assert manifests == by_identity(golden_objects("host-network"))
    assert manifests[("StatefulSet", "train-worker")]["spec"]["template"]["spec"]["hostNetwork"] is True


def test_host_network_without_interfaces_registers_nothing_and_says_what_stack_config_says() -> None:
    mocks = RecordingMocks()
    args = TRAIN | {"host_network": {"enabled": True}, "network_policy": {"enabled": False}}
    with pytest.raises(InvalidArgs, match=r"^invalid config kompi:hostNetwork\.mpiInterfaces = <missing>: expected "):
        run_body(lambda: KompiCluster("train", args), mocks)  # type: ignore[arg-type]
    assert mocks.registrations == []


def test_real_objects_other_than_the_shape_ones_are_refused_as_kompis_defect() -> None:
    shape = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}, "stringData": {}}
    assert _same_object(shape, shape | {"stringData": {"k": "v"}})["stringData"] == {"k": "v"}
    with pytest.raises(ShapeMismatch, match=r"^kompi built ConfigMap a in place of Secret$"):
        _same_object(shape, shape | {"kind": "ConfigMap"})
    with pytest.raises(ShapeMismatch):
        _same_object(shape, shape | {"metadata": {"name": "a", "namespace": "ml"}})
