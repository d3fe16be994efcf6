"""The base of kompi's dynamic resource providers: a KompiError reaches the user as its one line.

Pulumi runs a dynamic resource's provider in a process of its own (``pulumi.dynamic``'s server), which answers
every failed call with ``traceback.format_exc()``: through the ``pulumi`` command a rollout whose pods cannot
start printed a Python traceback ending in kompi's line. That process calls the provider's ``configure`` once,
before anything else, and serves nothing but dynamic providers; there, the traceback of a KompiError becomes
its type and message. Any other exception (a bug) keeps its traceback.
"""

from __future__ import annotations

import sys
import traceback

import pulumi.dynamic

from kompi_components.errors import KompiError


class KompiProvider(pulumi.dynamic.ResourceProvider):
    def configure(self, req: pulumi.dynamic.ConfigureRequest) -> None:
        answer_kompi_errors_in_one_line()


def answer_kompi_errors_in_one_line() -> None:
    """Makes ``traceback.format_exc`` (what the dynamic provider server reports) give a KompiError's one line."""
    if getattr(traceback.format_exc, "kompi_one_line", False):
        return  # once per process, whichever provider is configured first
    with_traceback = traceback.format_exc

    def format_exc(limit: int | None = None, chain: bool = True) -> str:
        raised = sys.exc_info()[1]
        if isinstance(raised, KompiError):
            return one_line(raised)
        return with_traceback(limit, chain)

    format_exc.kompi_one_line = True  # type: ignore[attr-defined]
    traceback.format_exc = format_exc


def one_line(error: KompiError) -> str:
    return f"{type(error).__name__}: {error}"
