"""`up --local` builds the image a stack names: each tag images/build.sh prints maps back to its flavour."""

from __future__ import annotations

import pytest

from kompi_engine.first_node import NoRealNode, flavor_of


@pytest.mark.parametrize(
    ("tag", "flavor"),
    [
        ("4.1.4-bookworm-0.1.0", "ompi4"),
        ("5.0.11-bookworm-0.1.0", "ompi5"),
        ("5.0.11-bookworm-0.1.0-torch2.15.0", "ompi5-torch"),
        ("4.1.4-bookworm-0.1.0-torch2.15.0", "ompi4-torch"),
    ],
)
def test_each_tag_build_sh_makes_names_its_flavor(tag: str, flavor: str) -> None:
    assert flavor_of(tag) == flavor


def test_a_tag_build_sh_does_not_make_is_refused_naming_it() -> None:
    with pytest.raises(NoRealNode, match="kompi:imageTag 3.1.0-x is no tag images/build.sh makes"):
        flavor_of("3.1.0-x")
