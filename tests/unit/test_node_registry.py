"""The real node's registry files, without a node: its password is made once and checked by bcrypt as the
registry does, clients get the auth file and CA they need, and containerd's hosts.toml trusts that CA."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import bcrypt
import yaml
from cryptography import x509

from kompi_engine.cluster.node_registry import USER, NodeRegistry
from kompi_engine.cluster.pki import make_pki

NODE_IP = "10.213.7.1"


def _registry(tmp_path: Path) -> NodeRegistry:
    make_pki(tmp_path / "pki", "10.96.0.1")
    registry = NodeRegistry(tmp_path / "registry", tmp_path / "pki", NODE_IP)
    registry.prepare()
    return registry


def test_the_auth_file_holds_the_password_that_the_htpasswd_file_accepts(tmp_path: Path) -> None:
    registry = _registry(tmp_path)
    (entry,) = json.loads(registry.auth_file.read_text())["auths"].items()
    assert entry[0] == registry.address == f"{NODE_IP}:5000"
    user, password = base64.b64decode(entry[1]["auth"]).decode().split(":", 1)
    (line,) = (registry.state / "htpasswd").read_text().splitlines()
    name, hashed = line.split(":", 1)
    assert (user, name) == (USER, USER)
    assert bcrypt.checkpw(password.encode(), hashed.encode())
    assert not bcrypt.checkpw(b"wrong", hashed.encode())
    assert registry.auth_file.stat().st_mode & 0o077 == 0


def test_the_password_is_made_once_and_kept_across_starts(tmp_path: Path) -> None:
    registry = _registry(tmp_path)
    first = registry.auth_file.read_text()
    registry.prepare()
    assert registry.auth_file.read_text() == first


def test_the_registry_serves_tls_for_its_address_and_asks_for_the_password(tmp_path: Path) -> None:
    registry = _registry(tmp_path)
    config = yaml.safe_load(registry.config_file.read_text())
    assert config["http"]["addr"] == registry.address
    assert config["auth"]["htpasswd"]["path"] == str(registry.state / "htpasswd")
    cert = x509.load_pem_x509_certificate(Path(config["http"]["tls"]["certificate"]).read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == [NODE_IP]
    assert cert.issuer == x509.load_pem_x509_certificate((tmp_path / "pki" / "ca.crt").read_bytes()).subject


def test_containerd_trusts_the_registry_through_the_local_ca(tmp_path: Path) -> None:
    registry = _registry(tmp_path)
    registry.trust(tmp_path / "certs.d")
    assert [path.name for path in (tmp_path / "certs.d" / registry.address).iterdir()] == ["ca.crt"]
    ca = (tmp_path / "pki" / "ca.crt").read_bytes()
    assert (tmp_path / "certs.d" / registry.address / "ca.crt").read_bytes() == ca
    assert (registry.cert_dir / "ca.crt").read_bytes() == ca
