"""The stack configs in the repository and the configs beside them that the tests and goldens share: every
feature, one-shot, host networking, a component's args and the defaults."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def stack_names() -> list[str]:
    return sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml") for path in REPO.glob("Pulumi.*.yaml"))


def as_config(values: dict[str, object]) -> dict[str, str]:
    """``{key: value}`` -> Pulumi-style ``kompi:*`` strings."""
    return {f"kompi:{key}": value if isinstance(value, str) else json.dumps(value) for key, value in values.items()}


EVERY_FEATURE: dict[str, object] = {
    "clusterName": "full",
    "namespace": "mpi",
    "workers": 3,
    "gpusPerWorker": 2,
    "slotsPerWorker": 2,
    "image": "registry.example.com/ml/kompi",
    "imageTag": "5.0.9-bookworm-0.1.0",
    "imagePullPolicy": "Always",
    "imagePullSecrets": ["regcred"],
    "shmSize": "8Gi",
    "masterPod": {
        "compute": True,
        "resources": {"requests": {"cpu": "2"}},
        "nodeSelector": {"pool": "cpu"},
        "volumes": [{"name": "scratch-master", "emptyDir": {}}],
        "volumeMounts": [{"name": "scratch-master", "mountPath": "/scratch"}],
    },
    "workerPod": {
        "resources": {"limits": {"memory": "64Gi"}},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "podAffinityTerm": {
                            "topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": {"app.kubernetes.io/instance": "full"}},
                        },
                    }
                ]
            }
        },
        "annotations": {"example.com/team": "ml"},
    },
    "networkPolicy": {"sshAllowFrom": ["10.0.0.0/8"]},
    "gangScheduling": {"enabled": True, "mode": "volcano"},
    "queue": "team-a",
    "queuePriorityClass": "urgent",
    "appCode": [
        {"name": "app", "repo": "https://github.com/example/app.git", "ref": "main", "mountPath": "/repo"},
        {
            "name": "private",
            "repo": "git@github.com:example/private.git",
            "mountPath": "/private",
            "subPath": "src",
            "sshKeySecret": "deploy-key",
            "retries": 3,
            "retryWaitSeconds": 20,
        },
    ],
    "sharedClaims": [{"claimName": "datasets", "accessMode": "ReadWriteMany", "mountPath": "/data", "readOnly": True}],
    "workerVolume": {"size": "100Gi", "storageClassName": "fast", "mountPath": "/scratch"},
}

# One-shot mode with worker release: the master is a Job, plus the release RBAC.
ONE_SHOT: dict[str, object] = EVERY_FEATURE | {
    "oneShot": {"enabled": True, "command": "mpiexec python3 /repo/train.py", "timeoutSeconds": 300},
    # The one-shot master runs no sshd, so it cannot be a compute node.
    "masterPod": EVERY_FEATURE["masterPod"] | {"compute": False},  # type: ignore[operator]
}

# KompiCluster's args in tests/api, as stack config (kompi:* keys) for a cluster named train
COMPONENT: dict[str, object] = {
    "clusterName": "train",
    "namespace": "ml",
    "createNamespace": False,
    "workers": 3,
    "image": "registry.example.com/ml/kompi",
    "imageTag": "4.1.4-bookworm-0.1.0",
    "workerPod": {"nodeSelector": {"pool": "gpu"}, "resources": {"requests": {"cpu": "2"}}},
    "dataVolumes": [{"name": "train", "size": "1Gi", "mountPath": "/train", "retain": True}],
    "dataPreparation": {"command": ["python3", "/prepare.py"]},
}

# The same on the nodes' network (no NetworkPolicy: it cannot select host-network pods)
HOST_NETWORK: dict[str, object] = COMPONENT | {
    "hostNetwork": {"enabled": True, "mpiInterfaces": "ens5"},
    "networkPolicy": {"enabled": False},
}

# Configs that are no stack file, by the name of their golden render (tests/golden/NAME.yaml)
CONFIGS: dict[str, dict[str, object]] = {
    "every-feature": EVERY_FEATURE,
    "one-shot": ONE_SHOT,
    "host-network": HOST_NETWORK,
    "component": COMPONENT,
    "defaults": {},
}
