"""Names shared by the Pulumi program and the images: the one source for both.

The images get these values at build time (``python -m kompi_components contract`` prints them as
KEY=VALUE lines that images/build.sh passes as build arguments), and the manifests that kompi renders
read them from here, so a port, path or user name cannot drift between the two.
"""

from __future__ import annotations

KOMPI_VERSION = "0.1.0"

# The extended resource a GPU is requested as (kompi:gpusPerWorker), as NVIDIA's device plugin names it.
GPU_RESOURCE = "nvidia.com/gpu"

# The unprivileged user the images create and the pods run as by default.
MPI_USER = "mpiuser"
MPI_UID = 1000
MPI_GID = 1000
MPI_HOME = "/home/mpiuser"

# sshd listens on an unprivileged port so that it can run as the pod's user.
SSH_PORT = 2222
SSH_PORT_NAME = "ssh"

# The cluster's SSH Secret is mounted read-only here; the entrypoints copy what sshd and ssh need
# into $HOME/.ssh with the modes that sshd's StrictModes requires.
SSH_SECRET_DIR = "/etc/kompi/ssh"
SSH_CLIENT_KEY = "id_ecdsa"
SSH_CLIENT_PUBLIC_KEY = "id_ecdsa.pub"
SSH_AUTHORIZED_KEYS = "authorized_keys"
SSH_HOST_KEY = "ssh_host_ecdsa_key"
SSH_HOST_PUBLIC_KEY = "ssh_host_ecdsa_key.pub"
SSH_KNOWN_HOSTS = "known_hosts"
SSH_SECRET_KEYS = (
    SSH_CLIENT_KEY,
    SSH_CLIENT_PUBLIC_KEY,
    SSH_AUTHORIZED_KEYS,
    SSH_HOST_KEY,
    SSH_HOST_PUBLIC_KEY,
    SSH_KNOWN_HOSTS,
)
# Mode of the mounted Secret files: owner read only (kube-openmpi used 0400 too).
SSH_SECRET_MODE = 0o400

# Writable, per-pod directory (an emptyDir) where the master keeps the hostfile it maintains.
GENERATED_DIR = "/kompi/generated"
HOSTFILE = f"{GENERATED_DIR}/hostfile"
# The memory-backed /dev/shm (kompi:shmSize) that NCCL needs.
SHM_DIR = "/dev/shm"

# Entrypoints installed in the images (on PATH).
WORKER_ENTRYPOINT = "kompi-worker"
MASTER_ENTRYPOINT = "kompi-master"
# Exits 0 when the local sshd answers with an SSH banner; used as the readiness probe.
READY_PROBE = "kompi-ready"
# The exit code of kompi's own init containers (kompi-fetch-code) when no restart can mend the failure
# (a ref that does not exist, a refused deploy key): `up` then fails at once instead of after a minute of
# restarts. 78 is sysexits' EX_CONFIG (a configuration error), which other programs use the same way.
# images/scripts/kompi_fetch_code.py repeats it (a standard-library script in the image);
# tests/images/test_fetch_code.py holds the two equal.
CANNOT_SUCCEED_EXIT = 78

# Environment the pods receive; the entrypoints read these names.
ENV_ROLE = "KOMPI_ROLE"  # "master" or "worker"
ENV_CLUSTER = "KOMPI_CLUSTER"  # cluster name, the prefix of every object name
ENV_WORKERS = "KOMPI_WORKERS"  # configured worker count
ENV_SLOTS_PER_WORKER = "KOMPI_SLOTS_PER_WORKER"
ENV_SERVICE_DOMAIN = "KOMPI_SERVICE_DOMAIN"  # <service>.<namespace>.svc.<cluster domain>
ENV_WORKER_PREFIX = "KOMPI_WORKER_PREFIX"  # worker pod names are <prefix>-<ordinal>
ENV_HOSTFILE = "KOMPI_HOSTFILE"
ENV_MASTER_SLOTS = "KOMPI_MASTER_SLOTS"  # set on a master that is a compute node too
# kompi:hostNetwork.mpiInterfaces on a host-network pod, for PyTorch: images/training/kompi_torch.py repeats the
# name (tests/images/test_kompi_torch.py holds the two equal) and takes rank 0's address and gloo's interface from it.
ENV_MPI_INTERFACES = "KOMPI_MPI_INTERFACES"


def as_env_lines() -> list[str]:
    """The shared names as KEY=VALUE lines, for the image build."""
    values = {
        "KOMPI_VERSION": KOMPI_VERSION,
        "MPI_USER": MPI_USER,
        "MPI_UID": str(MPI_UID),
        "MPI_GID": str(MPI_GID),
        "MPI_HOME": MPI_HOME,
        "SSH_PORT": str(SSH_PORT),
        "SSH_SECRET_DIR": SSH_SECRET_DIR,
        "GENERATED_DIR": GENERATED_DIR,
        "HOSTFILE": HOSTFILE,
    }
    return [f"{key}={value}" for key, value in values.items()]


# The image the stack configs use unless they say otherwise: <openmpi>-<base tag>-<kompi version>.
DEFAULT_OPENMPI_VERSION = "4.1.4"
DEFAULT_BASE_TAG = "bookworm"
DEFAULT_IMAGE_TAG = f"{DEFAULT_OPENMPI_VERSION}-{DEFAULT_BASE_TAG}-{KOMPI_VERSION}"
