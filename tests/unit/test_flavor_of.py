"""`up --local` builds and loads the image a stack names, `local up` every image but the training ones: tags
map back to their flavour."""

from __future__ import annotations

import re

import pytest

from kompi_engine.cluster.node_images import is_training_image
from kompi_engine.operation.first_node import NoRealNode, flavor_of


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
    with pytest.raises(NoRealNode, match=re.escape("kompi:imageTag 3.1.0-x is no tag images/build.sh makes")):
        flavor_of("3.1.0-x")


@pytest.mark.parametrize(
    ("name", "training"),
    [
        ("localhost/kompi:5.0.11-bookworm-0.1.0-torch2.15.0", True),
        ("localhost/kompi:ompi5-torch-bookworm", True),  # the working tag of the same image
        ("localhost/kompi:5.0.11-bookworm-0.1.0", False),
        ("localhost/kompi:ompi4-bookworm", False),
    ],
)
def test_local_up_leaves_out_training_images_by_either_tag(name: str, training: bool) -> None:
    assert is_training_image(name) is training
