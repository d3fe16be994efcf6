"""kompi: an Open MPI cluster on Kubernetes. `pulumi up` runs this; see README.md."""

from kompi_components.program import run

run()
