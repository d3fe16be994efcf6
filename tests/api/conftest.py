"""Pulumi tests: a fresh event loop for every test (tests/pulumi_runtime.py)."""

from tests.pulumi_runtime import fresh_event_loop

__all__ = ["fresh_event_loop"]
