"""The real node's image registry: distribution's reference registry in the node's network namespace,
serving TLS from the local cluster's CA and asking for a password, as a user's private registry does.

Pods and containerd reach it at NODE_IP:PORT inside the namespace; `podman push` on the host reaches the
same address on the host's loopback through a socat pair (as the API server reaches the kubelet). What a
client needs is written next to it: the CA (a certificate directory for `podman push --cert-dir`) and
the credentials in the auth-file format that podman reads and a kubernetes.io/dockerconfigjson pull
Secret holds. Its storage and credentials outlive `local down`, like containerd's image store.
"""

from __future__ import annotations

import base64
import json
import secrets
import shutil
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import bcrypt
import yaml

from kompi_engine.cluster.pki import issue_registry

PORT = 5000
USER = "kompi"


@dataclass(frozen=True)
class NodeRegistry:
    state: Path  # <node state>/registry
    pki: Path  # the local cluster's CA
    node_ip: str

    @property
    def address(self) -> str:
        """HOST:PORT, the first part of every image name in this registry."""
        return f"{self.node_ip}:{PORT}"

    @property
    def cert_dir(self) -> Path:
        """A directory with the CA as ca.crt: what `podman push --cert-dir` and containerd's hosts.toml take."""
        return self.state / "client"

    @property
    def auth_file(self) -> Path:
        """{"auths": {ADDRESS: {"auth": base64(user:password)}}}: podman's --authfile, a pull Secret's data."""
        return self.state / "client" / "auth.json"

    @property
    def config_file(self) -> Path:
        return self.state / "config.yml"

    def prepare(self) -> None:
        """Certificate, password (made once) and configuration; the storage is kept as it is."""
        (self.state / "data").mkdir(parents=True, exist_ok=True)
        self.cert_dir.mkdir(parents=True, exist_ok=True)
        self.state.chmod(0o700)
        issue_registry(self.pki, self.state, self.node_ip)
        shutil.copyfile(self.pki / "ca.crt", self.cert_dir / "ca.crt")
        password = self._password()
        hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt()).decode()
        (self.state / "htpasswd").write_text(f"{USER}:{hashed}\n")
        token = base64.b64encode(f"{USER}:{password}".encode()).decode()
        self.auth_file.write_text(json.dumps({"auths": {self.address: {"auth": token}}}, indent=1) + "\n")
        self.auth_file.chmod(0o600)
        self.config_file.write_text(yaml.safe_dump(self._config(), sort_keys=False))

    def _password(self) -> str:
        path = self.state / "password"
        if not path.exists():
            path.write_text(secrets.token_urlsafe(24))
            path.chmod(0o600)
        return path.read_text().strip()

    def _config(self) -> dict[str, object]:
        return {
            "version": 0.1,
            "log": {"level": "warn", "accesslog": {"disabled": True}},
            "storage": {"filesystem": {"rootdirectory": str(self.state / "data")}, "delete": {"enabled": True}},
            "http": {
                "addr": self.address,
                "tls": {"certificate": str(self.state / "serving.crt"), "key": str(self.state / "serving.key")},
                # signs upload state between requests; one registry process, so any value of its own does
                "secret": secrets.token_hex(16),
                # the debug server and its default port stay off (it would listen on the host's loopback)
            },
            "auth": {"htpasswd": {"realm": "kompi-local", "path": str(self.state / "htpasswd")}},
        }

    def trust(self, certs_d: Path) -> None:
        """containerd's trust in this registry: the CA as ca.crt in CERTS_D/ADDRESS, the directory form of its
        registry configuration (config_path), which makes this registry its only host. (A hosts.toml with
        the CA on a [host] entry also falls back to the bare server, whose TLS lacks the CA: a tag the
        registry does not have then ended in "x509: certificate signed by unknown authority".)"""
        directory = certs_d / self.address
        directory.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.cert_dir / "ca.crt", directory / "ca.crt")

    def usage(self) -> str:
        auth = self.auth_file
        return (
            f"real node: registry at {self.address} (TLS from the local CA, a password). Push kompi's images: "
            f"images/build.sh --push {self.address} --authfile {auth} --cert-dir {self.cert_dir}; pull Secret: "
            f"bin/kompi kubectl -n NAMESPACE create secret generic registry-pull "
            f"--type=kubernetes.io/dockerconfigjson --from-file=.dockerconfigjson={auth}; "
            f"stack: kompi:image {self.address}/kompi, kompi:imagePullSecrets [registry-pull]"
        )

    def answers(self) -> bool:
        """The registry answers its API's base URL over verified TLS (401 without credentials is an answer)."""
        context = ssl.create_default_context(cafile=str(self.cert_dir / "ca.crt"))
        try:
            with urllib.request.urlopen(f"https://{self.address}/v2/", context=context, timeout=2):
                return True
        except urllib.error.HTTPError as error:
            return error.code == 401
        except OSError:
            return False
