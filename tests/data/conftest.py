"""Pulumi tests here need a fresh event loop per test, like tests/program."""

from tests.program.conftest import fresh_event_loop

__all__ = ["fresh_event_loop"]
