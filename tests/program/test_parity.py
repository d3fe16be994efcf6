"""`pulumi up` (the program under mocks) and the offline render produce the same objects."""

from __future__ import annotations

import pytest

from kompi_components.render import render_objects
from kompi_components.stack_files import read_stack_config
from tests.program.parity import by_identity
from tests.pulumi_mocks import registered_manifests, run_program
from tests.stacks import EVERY_FEATURE, ONE_SHOT, REPO, as_config, stack_names

CONFIGS = {f"stack-{name}": read_stack_config(REPO, name) for name in stack_names()}
CONFIGS["every-feature"] = as_config(EVERY_FEATURE)
CONFIGS["defaults"] = {}
CONFIGS["one-shot"] = as_config(ONE_SHOT)


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
def test_render_and_pulumi_up_build_the_same_objects(config: dict[str, str]) -> None:
    rendered = by_identity(render_objects(config))
    registered = by_identity(registered_manifests(run_program(config)))
    assert sorted(registered) == sorted(rendered)
    for identity, manifest in rendered.items():
        assert registered[identity] == manifest, identity
