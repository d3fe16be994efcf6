"""Shared test set-up: the opt-out flag for the container tests."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

SKIP_CONTAINERS_FLAG = "--skip-containers"
SKIP_E2E_FLAG = "--skip-e2e"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        SKIP_CONTAINERS_FLAG,
        action="store_true",
        help="skip the tests that build images and run MPI jobs in podman containers (minutes)",
    )
    parser.addoption(
        SKIP_E2E_FLAG,
        action="store_true",
        help="skip the end-to-end tests (the engine build and a local cluster: minutes; half an hour cold)",
    )


def pytest_configure(config: pytest.Config) -> None:
    # Ctrl-C as at a terminal, however pytest was started: bash starts a script's background jobs (bin/test's
    # kwok run) with SIGINT ignored, which every child would inherit, and the signal tests send SIGINT.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    config.addinivalue_line(
        "markers", "containers: builds images or runs podman containers (opt out with --skip-containers)"
    )
    config.addinivalue_line(
        "markers", "e2e: runs kompi through the Pulumi engine against a local API server (tests/e2e)"
    )
    config.addinivalue_line(
        "markers", "real_nodes: e2e on the local cluster's real nodes (tests/e2e/node, nodes and training)"
    )
    config.addinivalue_line("markers", "several_nodes: e2e on a cluster of three real nodes (tests/e2e/nodes)")
    config.addinivalue_line("markers", "training: PyTorch training on a real node of its own (tests/e2e/training)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    e2e_dir = Path(__file__).parent / "e2e"
    # bin/test runs three e2e groups side by side as pytest runs of their own: the kwok tests, the one-node
    # package, and the three-node package followed by the training package. Each starts clusters of its own
    # (tests/e2e/port_blocks.py), and each real-node package holds its nodes for the package.
    several_nodes_dir = e2e_dir / "nodes"
    training_dir = e2e_dir / "training"
    real_node_dirs = (e2e_dir / "node", several_nodes_dir, training_dir)
    for item in items:
        if e2e_dir in item.path.parents:
            item.add_marker(pytest.mark.e2e)
        if any(directory in item.path.parents for directory in real_node_dirs):
            item.add_marker(pytest.mark.real_nodes)
        if several_nodes_dir in item.path.parents:
            item.add_marker(pytest.mark.several_nodes)
        if training_dir in item.path.parents:
            item.add_marker(pytest.mark.training)
    for flag, marker in ((SKIP_CONTAINERS_FLAG, "containers"), (SKIP_E2E_FLAG, "e2e")):
        if config.getoption(flag):
            skip = pytest.mark.skip(reason=f"{marker} tests skipped by {flag}")
            for item in items:
                if marker in item.keywords:
                    item.add_marker(skip)
