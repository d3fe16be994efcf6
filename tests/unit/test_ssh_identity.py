"""SSH keys derived from seeds: stable bytes, readable by OpenSSH, trusted for the cluster only."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kompi_components import contract
from kompi_components.naming import Names
from kompi_components.ssh_identity import identity_files, placeholder_secret_data

NAMES = Names(cluster="demo", namespace="ml", cluster_domain="cluster.local")
CLIENT_SEED = bytes(range(32))
HOST_SEED = bytes(range(32, 64))


def _files() -> dict[str, str]:
    return identity_files(CLIENT_SEED, HOST_SEED, "demo", NAMES.known_host_patterns()).as_secret_data()


def test_same_seeds_give_byte_identical_files() -> None:
    assert _files() == _files()


def test_client_and_host_keys_differ_and_other_seeds_give_other_keys() -> None:
    files = _files()
    assert files[contract.SSH_CLIENT_KEY] != files[contract.SSH_HOST_KEY]
    other = identity_files(HOST_SEED, CLIENT_SEED, "demo", NAMES.known_host_patterns()).as_secret_data()
    assert other[contract.SSH_CLIENT_KEY] != files[contract.SSH_CLIENT_KEY]


def test_short_seed_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        identity_files(b"short", HOST_SEED, "demo", [])


def test_known_hosts_trusts_the_host_key_for_this_clusters_names_only() -> None:
    files = _files()
    patterns, key_type, key = files[contract.SSH_KNOWN_HOSTS].split()
    assert patterns.split(",") == [
        f"[*.demo.ml.svc.cluster.local]:{contract.SSH_PORT}",
        f"[*.demo.ml.svc]:{contract.SSH_PORT}",
    ]
    assert files[contract.SSH_HOST_PUBLIC_KEY].split()[:2] == [key_type, key]
    assert files[contract.SSH_AUTHORIZED_KEYS] == files[contract.SSH_CLIENT_PUBLIC_KEY]


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen (.ci/run installs it)")
@pytest.mark.parametrize(
    ("private", "public"), [("id_ecdsa", "id_ecdsa.pub"), ("ssh_host_ecdsa_key", "ssh_host_ecdsa_key.pub")]
)
def test_openssh_reads_the_private_keys(tmp_path: Path, private: str, public: str) -> None:
    files = _files()
    key = tmp_path / private
    key.write_text(files[private])
    key.chmod(0o600)
    derived = subprocess.run(["ssh-keygen", "-y", "-f", str(key)], capture_output=True, text=True, check=True).stdout
    assert derived.split()[:2] == files[public].split()[:2]


def test_render_placeholders_hold_no_key_material() -> None:
    placeholders = placeholder_secret_data()
    assert sorted(placeholders) == sorted(contract.SSH_SECRET_KEYS)
    assert not any("PRIVATE KEY" in value or "ecdsa-sha2" in value for value in placeholders.values())


def test_docs_security_shows_the_placeholder_that_render_prints() -> None:
    placeholder = placeholder_secret_data(1)[contract.SSH_CLIENT_KEY]
    assert f"`{placeholder}`" in (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
