"""Shared test set-up: the opt-out flag for the container tests."""

from __future__ import annotations

import pytest

SKIP_CONTAINERS_FLAG = "--skip-containers"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        SKIP_CONTAINERS_FLAG,
        action="store_true",
        help="skip the tests that build images and run MPI jobs in podman containers (minutes)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "containers: builds images or runs podman containers (opt out with --skip-containers)"
    )
    config.addinivalue_line(
        "markers", "e2e: runs kompi through the Pulumi engine against a local API server (tests/e2e)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption(SKIP_CONTAINERS_FLAG):
        return
    skip = pytest.mark.skip(reason=f"container tests skipped by {SKIP_CONTAINERS_FLAG}")
    for item in items:
        if "containers" in item.keywords:
            item.add_marker(skip)
