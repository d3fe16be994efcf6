"""pulumi-resource-kompi as the engine runs it: GetPluginInfo and GetSchema over gRPC, and what the schema says."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc

from kompi_components import contract
from kompi_components.components.inputs import SHAPE_VALUES
from kompi_components.config.keys import python_names
from kompi_components.config.schema import KompiConfig
from kompi_components.provider import engine_arguments, schema
from tests.stacks import REPO

SCHEMA_FILE = REPO / "sdk" / "schema.json"
CLUSTER = "kompi:index:Cluster"


@pytest.fixture(scope="module")
def provider() -> Iterator[provider_pb2_grpc.ResourceProviderStub]:
    """The provider started with the arguments the engine passes (a tracing URL among them)."""
    command = [sys.executable, "-m", "kompi_components.provider", "--logtostderr", "-v=9"]
    process = subprocess.Popen(
        [*command, "--tracing", "http://127.0.0.1:1/trace", "127.0.0.1:1"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())  # the engine reads the port from the first line
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield provider_pb2_grpc.ResourceProviderStub(channel)
    finally:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def served(provider: provider_pb2_grpc.ResourceProviderStub) -> dict[str, Any]:
    return dict(json.loads(provider.GetSchema(provider_pb2.GetSchemaRequest(version=0)).schema))


def test_the_plugin_reports_kompis_version(provider: provider_pb2_grpc.ResourceProviderStub) -> None:
    from google.protobuf import empty_pb2

    assert provider.GetPluginInfo(empty_pb2.Empty()).version == contract.KOMPI_VERSION


def test_the_served_schema_is_the_checked_in_one(served: dict[str, Any]) -> None:
    assert served == schema() == json.loads(SCHEMA_FILE.read_text()), (
        "run: venv/bin/python -m kompi_components.provider schema > sdk/schema.json"
    )
    assert (served["name"], served["version"]) == ("kompi", contract.KOMPI_VERSION)


def test_the_cluster_takes_every_config_key_and_the_rollouts_cluster_access(served: dict[str, Any]) -> None:
    inputs = served["resources"][CLUSTER]["inputProperties"]
    assert set(inputs) == set(python_names(KompiConfig)) | {"kubeconfig", "kubeContext", "kubeCluster"}
    assert served["resources"][CLUSTER]["isComponent"] is True
    assert not served["resources"][CLUSTER].get("requiredInputs")  # every key has its default
    for key, field in KompiConfig.model_fields.items():
        assert inputs[field.alias or key]["description"].startswith((field.description or "")[:20]), key


def test_only_the_namespace_the_image_and_the_access_take_outputs(served: dict[str, Any]) -> None:
    inputs = served["resources"][CLUSTER]["inputProperties"]
    takes_outputs = {key for key, spec in inputs.items() if not spec.get("plain")}
    assert takes_outputs == set(SHAPE_VALUES) | {"kubeconfig", "kubeContext", "kubeCluster"}
    assert inputs["workerPod"]["$ref"] == "#/types/kompi:index:PodSettingsArgs"
    assert served["types"]["kompi:index:PodSettingsArgs"]["properties"]["nodeSelector"]["type"] == "object"


def test_the_outputs_are_the_stack_programs(served: dict[str, Any]) -> None:
    outputs = served["resources"][CLUSTER]["properties"]
    assert set(outputs) == {"namespace", "masterPod", "workers", "totalSlots", "hostfile", "firstJob", "sshPublicKey"}
    assert outputs["totalSlots"]["type"] == "integer" and outputs["firstJob"]["type"] == "string"


def test_the_tracing_url_is_not_taken_for_the_engines_address() -> None:
    assert engine_arguments(["--logtostderr", "--tracing", "http://t", "-v=3", "127.0.0.1:9"]) == [
        "--logtostderr",
        "-v=3",
        "127.0.0.1:9",
    ]
    assert engine_arguments(["--tracing=http://t", "127.0.0.1:9"]) == ["127.0.0.1:9"]


def test_a_settings_type_is_described_as_its_key_is_capitals_kept(served: dict[str, Any]) -> None:
    described = served["types"]["kompi:index:NetworkPolicySettingsArgs"]["description"]
    key = KompiConfig.model_fields["network_policy"].description or ""
    assert described == key[:1].upper() + key[1:] == "NetworkPolicy settings"
