"""Pure functions that build the Kubernetes objects of a kompi cluster as plain dicts.

Both `pulumi up` (through kompi_components.components) and the offline render use these, so
the objects they produce are the same by construction.
"""
