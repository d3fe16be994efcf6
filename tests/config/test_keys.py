"""kompi_components.config.keys: the one conversion between stack keys and Python names."""

from __future__ import annotations

from pydantic import BaseModel

from kompi_components.config.keys import model_of, python_names, stack_key, to_python_names, to_stack_keys
from kompi_components.config.schema import KompiConfig


def _models(model: type[BaseModel], found: set[type[BaseModel]]) -> set[type[BaseModel]]:
    found.add(model)
    for field in model.model_fields.values():
        inner = model_of(field.annotation)
        if inner is not None and inner not in found:
            _models(inner, found)
    return found


def test_the_schema_takes_the_stack_key_of_every_field_nested_ones_too() -> None:
    models = _models(KompiConfig, set())
    assert len(models) > 5  # the pod settings, app code, data volumes, ... are walked too
    for model in models:
        for name, field in model.model_fields.items():
            assert field.alias == stack_key(name), f"{model.__name__}.{name}"


def test_python_names_follow_the_schemas_order() -> None:
    names = python_names(KompiConfig)
    assert list(names.values()) == list(KompiConfig.model_fields)
    assert names["workerPod"] == "worker_pod" and names["namespace"] == "namespace"


# As a program writes ClusterArgs, and the same in stack keys: kompi's structures converted, lists of them
# too; the Kubernetes objects inside (nodeSelector's labels, resources) and unknown keys as they are.
PYTHON = {
    "cluster_name": "c",
    "worker_pod": {"node_selector": {"node_pool": "gpu"}, "resources": {"limits": {"nvidia.com/gpu": 1}}},
    "data_volumes": [{"name": "train", "mount_path": "/train"}],
    "app_code": [{"name": "a", "repo": "https://x/a.git", "mount_path": "/a", "ssh_key_secret": "k"}],
    "no_such_key": {"some_thing": 1},
}
STACK = {
    "clusterName": "c",
    "workerPod": {"nodeSelector": {"node_pool": "gpu"}, "resources": {"limits": {"nvidia.com/gpu": 1}}},
    "dataVolumes": [{"name": "train", "mountPath": "/train"}],
    "appCode": [{"name": "a", "repo": "https://x/a.git", "mountPath": "/a", "sshKeySecret": "k"}],
    "no_such_key": {"some_thing": 1},
}


def test_python_names_and_stack_keys_convert_through_kompis_structures_both_ways() -> None:
    assert to_stack_keys(PYTHON, KompiConfig) == STACK
    assert to_python_names(STACK, KompiConfig) == PYTHON


def test_either_spelling_is_taken_and_values_that_are_no_structure_pass() -> None:
    mixed = {"workerPod": {"node_selector": {"a": "b"}}, "image_tag": "1", "masterPod": '{"nodeSelector": {}}'}
    assert to_stack_keys(mixed, KompiConfig) == {
        "workerPod": {"nodeSelector": {"a": "b"}},
        "imageTag": "1",
        "masterPod": '{"nodeSelector": {}}',  # a stack config string: the loader decodes it
    }
    assert to_python_names(mixed, KompiConfig) == {
        "worker_pod": {"node_selector": {"a": "b"}},
        "image_tag": "1",
        "master_pod": '{"nodeSelector": {}}',
    }
