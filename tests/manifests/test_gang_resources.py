"""The PodGroup asks for the whole gang: minMember and minResources follow workers, GPUs and the master."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from kompi_components.manifests import quantities
from kompi_components.render import render_objects
from tests.stacks import as_config

GANG = {"enabled": True, "mode": "scheduler-plugins"}


def _pod_group(values: dict[str, object]) -> dict[str, Any]:
    objects = render_objects(as_config({"clusterName": "g", "gangScheduling": GANG} | values))
    [group] = [manifest for manifest in objects if manifest["kind"] == "PodGroup"]
    return dict(group["spec"])


def test_gang_counts_workers_gpus_and_the_master() -> None:
    spec = _pod_group({"workers": 3, "gpusPerWorker": 4})
    assert spec == {"minMember": 4, "minResources": {"nvidia.com/gpu": "12"}}


def test_a_compute_master_adds_its_gpus_and_requests() -> None:
    master = {"compute": True, "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}
    worker = {"resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}
    spec = _pod_group({"workers": 2, "gpusPerWorker": 4, "masterPod": master, "workerPod": worker})
    assert spec == {
        "minMember": 3,
        "minResources": {"cpu": "4500m", "memory": "2560Mi", "nvidia.com/gpu": "12"},
    }


def test_limits_count_where_requests_are_left_out() -> None:
    worker = {"resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "250m"}}}
    spec = _pod_group({"workers": 2, "workerPod": worker})
    assert spec["minResources"] == {"cpu": "500m", "memory": "2Gi"}


def test_scaling_changes_the_gang_with_the_workers() -> None:
    small, large = _pod_group({"workers": 2, "gpusPerWorker": 8}), _pod_group({"workers": 5, "gpusPerWorker": 8})
    assert (small["minMember"], small["minResources"]) == (3, {"nvidia.com/gpu": "16"})
    assert (large["minMember"], large["minResources"]) == (6, {"nvidia.com/gpu": "40"})


def test_a_gang_without_requests_has_no_min_resources() -> None:
    assert _pod_group({"workers": 2}) == {"minMember": 3}


def test_volcano_pod_groups_carry_the_same_totals() -> None:
    objects = render_objects(
        as_config({"clusterName": "g", "workers": 2, "gpusPerWorker": 2, "gangScheduling": GANG | {"mode": "volcano"}})
    )
    [group] = [manifest for manifest in objects if manifest["kind"] == "PodGroup"]
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert group["spec"] == {"minMember": 3, "minResources": {"nvidia.com/gpu": "4"}}


@pytest.mark.parametrize(
    ("value", "amount"),
    [
        ("2", 2),
        ("500m", Fraction(1, 2)),
        ("1Gi", 2**30),
        ("1.5G", 1_500_000_000),
        ("1e3", 1000),
        (".5", Fraction(1, 2)),
    ],
)
def test_quantities_parse_exactly(value: str, amount: Fraction) -> None:
    assert quantities.parse(value) == amount


@pytest.mark.parametrize(
    ("amount", "printed"),
    [(Fraction(2**40), "1Ti"), (Fraction(3 * 2**29), "1536Mi"), (Fraction(12), "12"), (Fraction(9, 2), "4500m")],
)
def test_quantities_print_as_kubernetes_would_read_them(amount: Fraction, printed: str) -> None:
    assert quantities.format_quantity(amount, in_bytes=True) == printed
    assert quantities.parse(printed) == amount


def test_counts_never_print_with_byte_suffixes() -> None:
    assert quantities.total([(256, {"nvidia.com/gpu": Fraction(4)})]) == {"nvidia.com/gpu": "1024"}
    assert quantities.total([(2, {"memory": Fraction(2**39)})]) == {"memory": "1Ti"}
