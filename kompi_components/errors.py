"""The failures whose message is the whole story for the user."""

from __future__ import annotations


class KompiError(Exception):
    """A failure that kompi explains in one line: what went wrong, and what to look at or set. Where Pulumi runs
    kompi's dynamic resources, that line is what the user sees, not a Python traceback
    (components/dynamic_provider.py)."""
