"""The local cluster's certificates: one CA, the API server's serving cert and client certs per component."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=3650)


@dataclass(frozen=True)
class Identity:
    """A client certificate: Kubernetes reads the user from CN and the groups from O."""

    name: str
    common_name: str
    groups: tuple[str, ...] = ()


CLIENTS = (
    Identity("admin", "kubernetes-admin", ("system:masters",)),
    Identity("controller-manager", "system:kube-controller-manager"),
    Identity("scheduler", "system:kube-scheduler"),
    Identity("apiserver-kubelet-client", "kube-apiserver-kubelet-client", ("system:masters",)),
    Identity("kwok", "kwok-controller", ("system:masters",)),
    # the gang scheduler and its PodGroup controller: users that RBAC grants only what they need
    Identity("scheduler-plugins", "kompi:scheduler-plugins"),
    Identity("scheduler-plugins-controller", "kompi:scheduler-plugins-controller"),
    # the real node's cluster DNS: RBAC lets it read services, endpoint slices and namespaces
    Identity("coredns", "kompi:coredns"),
    Identity("kube-router", "kompi:kube-router"),
    # Kueue's manager (bin/kompi local up --kueue)
    Identity("kueue", "kompi:kueue"),
)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    path.chmod(0o600)


def _name(common_name: str, groups: tuple[str, ...] = ()) -> x509.Name:
    parts = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, group) for group in groups]
    return x509.Name([*parts, x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
    )


@dataclass(frozen=True)
class Authority:
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    @classmethod
    def create(cls, directory: Path, name: str, common_name: str) -> Authority:
        key = _key()
        subject = _name(common_name)
        cert = (
            _builder(subject, subject, key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .sign(key, hashes.SHA256())
        )
        _write_key(directory / f"{name}.key", key)
        (directory / f"{name}.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return cls(key, cert)

    @classmethod
    def load(cls, directory: Path, name: str) -> Authority:
        key = serialization.load_pem_private_key((directory / f"{name}.key").read_bytes(), None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{directory / name}.key is not the EC key make_pki writes")
        return cls(key, x509.load_pem_x509_certificate((directory / f"{name}.crt").read_bytes()))

    def issue(
        self,
        directory: Path,
        name: str,
        subject: x509.Name,
        usage: x509.ObjectIdentifier,
        alt_names: list[x509.GeneralName] | None = None,
    ) -> None:
        key = _key()
        builder = (
            _builder(subject, self.cert.subject, key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if alt_names:
            builder = builder.add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        _write_key(directory / f"{name}.key", key)
        (directory / f"{name}.crt").write_bytes(
            builder.sign(self.key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
        )


def make_pki(directory: Path, service_ip: str) -> None:
    """CA, serving and client certificates, front-proxy CA and the service-account signing key."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    ca = Authority.create(directory, "ca", "kompi-local-ca")
    dns = [
        "localhost",
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local",
    ]
    alt_names: list[x509.GeneralName] = [x509.DNSName(name) for name in dns]
    alt_names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ("127.0.0.1", service_ip)]
    ca.issue(directory, "apiserver", _name("kube-apiserver"), ExtendedKeyUsageOID.SERVER_AUTH, alt_names)
    for client in CLIENTS:
        ca.issue(directory, client.name, _name(client.common_name, client.groups), ExtendedKeyUsageOID.CLIENT_AUTH)
    # the aggregation layer's requestheader CA: without it controller-manager and scheduler complain every few seconds
    front_proxy = Authority.create(directory, "front-proxy-ca", "kompi-local-front-proxy-ca")
    front_proxy.issue(directory, "front-proxy-client", _name("front-proxy-client"), ExtendedKeyUsageOID.CLIENT_AUTH)
    _write_key(directory / "sa.key", _key())
    sa_key = serialization.load_pem_private_key((directory / "sa.key").read_bytes(), None)
    (directory / "sa.pub").write_bytes(
        sa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


def issue_missing_clients(directory: Path) -> list[str]:
    """Client certificates added to CLIENTS since ``directory`` was made, signed by its CA (keeps the rest)."""
    missing = [client for client in CLIENTS if not (directory / f"{client.name}.crt").exists()]
    if missing:
        ca = Authority.load(directory, "ca")
        for client in missing:
            ca.issue(directory, client.name, _name(client.common_name, client.groups), ExtendedKeyUsageOID.CLIENT_AUTH)
    return [client.name for client in missing]


def issue_kubelet(directory: Path, target: Path, node_name: str, node_ip: str) -> None:
    """A kubelet's two certificates, in ``target`` (each node's own) from the CA in ``directory``: its user
    for the Node authorizer (system:node:NAME in system:nodes) and its serving certificate for the API
    server's exec/logs connections."""
    ca = Authority.load(directory, "ca")
    user = _name(f"system:node:{node_name}", ("system:nodes",))
    ca.issue(target, "kubelet-client", user, ExtendedKeyUsageOID.CLIENT_AUTH)
    alt_names: list[x509.GeneralName] = [x509.DNSName(node_name), x509.IPAddress(ipaddress.ip_address(node_ip))]
    ca.issue(target, "kubelet-serving", _name(node_name), ExtendedKeyUsageOID.SERVER_AUTH, alt_names)


def issue_serving(directory: Path, target: Path, common_name: str, address: str, name: str = "serving") -> None:
    """A serving certificate (target/NAME.crt, .key) for ``address``, from the CA in ``directory``."""
    ca = Authority.load(directory, "ca")
    alt_names: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address(address))]
    ca.issue(target, name, _name(common_name), ExtendedKeyUsageOID.SERVER_AUTH, alt_names)


def issue_registry(directory: Path, target: Path, node_ip: str) -> None:
    """The node registry's serving certificate (target/serving.crt, .key) for its address."""
    issue_serving(directory, target, f"kompi-registry {node_ip}", node_ip)
