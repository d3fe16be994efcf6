"""Building the engine: each component (the Pulumi CLI and providers, Kubernetes, the gang scheduler, Kueue,
the real node's binaries) with its Go compile from the module proxy, and `engine build` over them all
(engine.py)."""
