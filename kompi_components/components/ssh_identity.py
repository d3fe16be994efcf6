"""The cluster's SSH identity: key seeds kept by pulumi-random, keys derived, stored in a Secret."""

from __future__ import annotations

import base64
from typing import Any

import pulumi
import pulumi_random as random

from kompi_components.components.kubernetes_object import ResourceFactory
from kompi_components.manifests.meta import PlannedObject
from kompi_components.naming import Names
from kompi_components.ssh_identity import SEED_BYTES, SshIdentityFiles, identity_files


class SshIdentity(pulumi.ComponentResource):
    """Changing ``key_version`` replaces both seeds, which rotates client and host keys."""

    secret_data: pulumi.Output[dict[str, str]]
    public_key: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        names: Names,
        key_version: int,
        opts: pulumi.ResourceOptions | None = None,
        known_hosts: pulumi.Input[list[str]] | None = None,
    ) -> None:
        """``known_hosts``: the host-name patterns the host key is trusted for (default: ``names``'), an Output
        when the namespace is known only during `up`."""
        super().__init__("kompi:index:SshIdentity", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        keepers = {"keyVersion": str(key_version)}
        client_seed = random.RandomBytes(f"{name}-client-seed", length=SEED_BYTES, keepers=keepers, opts=child)
        host_seed = random.RandomBytes(f"{name}-host-seed", length=SEED_BYTES, keepers=keepers, opts=child)

        def derive(values: list[Any]) -> SshIdentityFiles:
            client, host = (base64.b64decode(seed) for seed in values[:2])
            return identity_files(client, host, names.cluster, list(values[2]))

        patterns = names.known_host_patterns() if known_hosts is None else known_hosts
        files = pulumi.Output.all(client_seed.base64, host_seed.base64, patterns).apply(derive)
        self.secret_data = pulumi.Output.secret(files.apply(lambda f: f.as_secret_data()))
        # The public key is not secret, though it is derived from a secret seed.
        self.public_key = pulumi.Output.unsecret(files.apply(lambda f: f.client_public))

    def store(
        self, secret: PlannedObject, depends_on: list[pulumi.Resource], factory: ResourceFactory
    ) -> pulumi.CustomResource:
        """Create the Secret (built from ``secret_data`` by kompi.manifests) as a child."""
        opts = pulumi.ResourceOptions(parent=self, depends_on=depends_on)
        created = factory.create(secret, factory.inputs(secret), opts)
        self.register_outputs({"publicKey": self.public_key})
        return created
