"""A step of a real node's `up`, with the `down` that undoes it: the cluster's steps (cluster/steps.py), run on
a RealNode."""

from __future__ import annotations

from kompi_engine.cluster.steps import Log, Step

__all__ = ["Log", "Step"]
