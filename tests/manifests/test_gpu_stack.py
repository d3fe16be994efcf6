"""The gpu stack gangs with a maintained scheduler (scheduler-plugins' Coscheduling), never kube-batch."""

from __future__ import annotations

from kompi_components.render import render_stack
from tests.stacks import REPO

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


def test_gpu_stack_renders_a_pod_group_for_scheduler_plugins() -> None:
    objects = render_stack(REPO, "gpu")
    [group] = [manifest for manifest in objects if manifest["kind"] == "PodGroup"]
    assert group["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    assert group["metadata"]["namespace"] == "kompi-gpu"
    assert group["spec"]["minMember"] == 4 + 1  # the workers and the master
    statefulsets = [manifest for manifest in objects if manifest["kind"] == "StatefulSet"]
    assert len(statefulsets) == 2
    for statefulset in statefulsets:
        template = statefulset["spec"]["template"]
        assert template["metadata"]["labels"][POD_GROUP_LABEL] == group["metadata"]["name"]
        assert template["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
    assert not [manifest for manifest in objects if manifest["kind"] == "PodDisruptionBudget"]
    assert "kube-batch" not in str(objects)


def test_no_stack_in_the_repository_relies_on_kube_batch() -> None:
    for stack_file in REPO.glob("Pulumi.*.yaml"):
        assert "mode: pdb" not in stack_file.read_text(), stack_file.name
