"""`kompi-discover scale N`: one-shot mode's one Kubernetes API call, apart from discovery (which reads DNS
only). It PATCHes the worker StatefulSet's scale subresource with the pod's own service-account token; RBAC
lets that token patch that one object and nothing else."""

from __future__ import annotations

import json
import os
import ssl
import urllib.request
from pathlib import Path

from .log import log

SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def scale(replicas: int, statefulset: str) -> None:
    """PATCH the StatefulSet's scale subresource with the pod's own token (RBAC: that one object)."""
    sa_dir = Path(os.environ.get("KOMPI_SA_DIR", SA_DIR))
    token = (sa_dir / "token").read_text().strip()
    namespace = (sa_dir / "namespace").read_text().strip()
    api = os.environ.get("KOMPI_KUBE_API") or (
        f"https://{os.environ['KUBERNETES_SERVICE_HOST']}:{os.environ.get('KUBERNETES_SERVICE_PORT', '443')}"
    )
    url = f"{api.rstrip('/')}/apis/apps/v1/namespaces/{namespace}/statefulsets/{statefulset}/scale"
    body = json.dumps({"spec": {"replicas": replicas}}).encode()
    request = urllib.request.Request(url, data=body, method="PATCH")
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/merge-patch+json")
    request.add_header("Accept", "application/json")
    context = ssl.create_default_context(cafile=str(sa_dir / "ca.crt")) if url.startswith("https:") else None
    with urllib.request.urlopen(request, timeout=10, context=context) as response:
        reply = json.loads(response.read() or b"{}")
    log(f"{statefulset}: replicas {reply.get('spec', {}).get('replicas', replicas)}")
