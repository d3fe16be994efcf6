"""The cluster's SSH keys, derived deterministically from random bytes that Pulumi keeps in state.

The same seed always gives byte-identical files (PEM, not OpenSSH's private format, whose check
field is random), so a second `pulumi up` changes nothing; a new seed rotates the keys.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from kompi_components import contract

# Order of the NIST P-256 group: private scalars are in [1, order - 1].
_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
SEED_BYTES = 32


def derive_private_key(seed: bytes, purpose: str) -> ec.EllipticCurvePrivateKey:
    """An ECDSA P-256 key from ``seed``; ``purpose`` keeps client and host keys apart."""
    if len(seed) < SEED_BYTES:
        raise ValueError(f"seed must have at least {SEED_BYTES} bytes")
    digest = hashlib.sha512(purpose.encode() + b"\0" + seed).digest()
    scalar = int.from_bytes(digest, "big") % (_P256_ORDER - 1) + 1
    return ec.derive_private_key(scalar, ec.SECP256R1())


def private_pem(key: ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    ).decode()


def public_openssh(key: ec.EllipticCurvePrivateKey, comment: str) -> str:
    blob = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    return f"{blob} {comment}"


@dataclass(frozen=True)
class SshIdentityFiles:
    """The files of the cluster's SSH Secret, by the names the images expect."""

    client_private: str
    client_public: str
    host_private: str
    host_public: str
    known_hosts: str

    def as_secret_data(self) -> dict[str, str]:
        return {
            contract.SSH_CLIENT_KEY: self.client_private,
            contract.SSH_CLIENT_PUBLIC_KEY: self.client_public + "\n",
            contract.SSH_AUTHORIZED_KEYS: self.client_public + "\n",
            contract.SSH_HOST_KEY: self.host_private,
            contract.SSH_HOST_PUBLIC_KEY: self.host_public + "\n",
            contract.SSH_KNOWN_HOSTS: self.known_hosts,
        }


def identity_files(client_seed: bytes, host_seed: bytes, cluster: str, host_patterns: list[str]) -> SshIdentityFiles:
    """Client and host keys for one cluster; the host key is trusted for ``host_patterns`` only."""
    client = derive_private_key(client_seed, "client")
    host = derive_private_key(host_seed, "host")
    host_public = public_openssh(host, f"kompi-host@{cluster}")
    host_blob = " ".join(host_public.split()[:2])
    return SshIdentityFiles(
        client_private=private_pem(client),
        client_public=public_openssh(client, f"kompi@{cluster}"),
        host_private=private_pem(host),
        host_public=host_public,
        known_hosts=f"{','.join(host_patterns)} {host_blob}\n",
    )


def placeholder_secret_data(key_version: int = 1) -> dict[str, str]:
    """What the offline render shows instead of key material (which only `pulumi up` makes); it names the
    key version, so that a render shows a rotation as the new Secret that `pulumi up` makes."""
    return {
        name: f"<{name}: made by pulumi up from pulumi-random state, key version {key_version}>"
        for name in contract.SSH_SECRET_KEYS
    }
