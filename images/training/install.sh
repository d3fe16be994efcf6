#!/bin/bash
# Installs the training image's contents on a kompi image (run once, as root, at image build): the pinned
# Python packages of requirements.txt (PyTorch with its CUDA wheels, scikit-learn), and kompi_torch on
# every python3's path through a .pth file (sshd passes no PYTHONPATH to the ranks it starts).
set -euo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=images/scripts/pip-install.sh
source "$here/pip-install.sh"
: "${TORCH_VERSION:?build argument TORCH_VERSION is empty (build with images/build.sh)}"

pip_install -r "$here/requirements.txt"
install -D -m 0644 "$here/kompi_torch.py" /opt/kompi/python/kompi_torch.py
echo /opt/kompi/python > "$(python3 -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/kompi.pth"
# the torch the tag names, importable with kompi_torch as the pod's user
installed=$(python3 -c 'import kompi_torch, torch; print(torch.__version__.split("+")[0])')
[ "$installed" = "$TORCH_VERSION" ] || { echo "install.sh: torch $installed, not $TORCH_VERSION" >&2; exit 1; }
