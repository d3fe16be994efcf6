"""``pulumi-resource-kompi``: kompi's component provider, so that any Pulumi language (YAML, TypeScript, Go,
...) can declare ``kompi:index:Cluster``.

The Pulumi engine runs an executable named ``pulumi-resource-kompi`` that it finds on PATH (pip installs this
one as a console script) and talks gRPC with it; no language host is needed. Pulumi's component provider host
serves the schema, inferred from KompiCluster's type hints (ClusterArgs and its outputs), and constructs the
component here, so its children, the rollout step and the data guard included, are kompi's own Python.
"""

import json
import sys
from typing import Any

import pulumi
from pulumi.errors import InputPropertyError
from pulumi.provider import main as serve
from pulumi.provider.experimental.component import ComponentProvider

from kompi_components import contract
from kompi_components.components.cluster import KompiCluster
from kompi_components.components.inputs import InvalidArgs, resolve

PACKAGE = "kompi"


class Cluster(KompiCluster):
    """An Open MPI cluster on Kubernetes: a master and a StatefulSet of workers that reach each other over SSH,
    so that `kubectl exec <master> -- mpiexec ...` runs a distributed job. Its Kubernetes objects use the
    provider given in the resource options (or the default one)."""


def engine_arguments(argv: list[str]) -> list[str]:
    """The engine's arguments without ``--tracing URL``: the host takes the first positional argument for the
    engine's address, and the tracing URL would be it."""
    kept: list[str] = []
    skip = False
    for argument in argv:
        if skip:
            skip = False
        elif argument == "--tracing":
            skip = True
        elif not argument.startswith("--tracing="):
            kept.append(argument)
    return kept


class KompiProvider(ComponentProvider):
    """Pulumi's component provider, which checks the arguments before it constructs the cluster: a bad value
    is then the same one line as in Python, not an error inside the constructor, which the host reports with
    its traceback."""

    def __init__(self) -> None:
        super().__init__([Cluster], PACKAGE, None, contract.KOMPI_VERSION)

    def construct(
        self, name: str, resource_type: str, inputs: pulumi.Inputs, options: pulumi.ResourceOptions | None = None
    ) -> Any:
        component = resource_type.rsplit(":", 1)[-1]
        if component in self._component_defs:
            try:
                resolve(self.map_inputs(inputs, self._component_defs[component]), name)
            except InvalidArgs as error:
                path = error.key.removeprefix("kompi:")
                raise InputPropertyError(path, str(error)) from None
        return super().construct(name, resource_type, inputs, options)


def schema() -> dict[str, Any]:
    """The package schema the provider serves (sdk/schema.json is this, for `pulumi package gen-sdk`)."""
    served: dict[str, Any] = json.loads(KompiProvider().schema or "{}")
    return served


def main() -> None:
    if sys.argv[1:] == ["schema"]:  # (the engine always passes an address)
        print(json.dumps(schema(), indent=2))
        return
    sys.argv = [sys.argv[0], *engine_arguments(sys.argv[1:])]
    serve(KompiProvider(), sys.argv[1:])


if __name__ == "__main__":
    main()
