"""The gpu stack gangs with a maintained scheduler (scheduler-plugins' Coscheduling), never kube-batch."""

from __future__ import annotations

import yaml

from kompi_components.render import render_stack
from tests.stacks import REPO

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
KUBE_BATCH_GROUP = "scheduling.incubator.k8s.io/"  # kube-batch's PodGroup


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
    assert not [manifest for manifest in objects if manifest["apiVersion"].startswith(KUBE_BATCH_GROUP)]


def test_no_stack_in_the_repository_relies_on_kube_batch() -> None:
    for stack_file in REPO.glob("Pulumi.*.yaml"):
        config = yaml.safe_load(stack_file.read_text())["config"]
        gang = config.get("kompi:gangScheduling") or {}
        assert gang.get("mode", "scheduler-plugins") != "pdb", stack_file.name
