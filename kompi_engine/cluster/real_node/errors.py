"""The error every real-node failure raises."""


class RealNodeError(RuntimeError):
    """The real node cannot start, or a host tool it needs is missing."""
