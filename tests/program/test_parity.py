"""`pulumi up` (the program under mocks) registers exactly the objects of the golden renders, which the offline
render prints (tests/golden): one code path for both, for every stack and named config."""

from __future__ import annotations

import pytest

from tests.golden import case_config, golden_cases, golden_objects
from tests.program.parity import by_identity
from tests.pulumi_mocks import registered_manifests, run_program


@pytest.mark.parametrize("case", golden_cases())
def test_pulumi_up_registers_the_golden_objects(case: str) -> None:
    golden = by_identity(golden_objects(case))
    registered = by_identity(registered_manifests(run_program(case_config(case))))
    assert sorted(registered) == sorted(golden)
    for identity, manifest in golden.items():
        assert registered[identity] == manifest, identity
