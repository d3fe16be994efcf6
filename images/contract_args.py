"""Print kompi's shared names (kompi_components.contract) as KEY=VALUE lines for image builds.

The contract module is the one source of truth for ports, paths, user and file names; images/build.sh
turns every line printed here into a ``--build-arg``. Besides ``as_env_lines()`` this prints every other
upper-case string or integer constant of the module (Secret file names, entrypoint names), so the image
never repeats one of them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

REPO_ROOT = Path(__file__).resolve().parent.parent


def load_contract() -> ModuleType:
    """Import kompi_components.contract from this checkout."""
    sys.path.insert(0, str(REPO_ROOT))
    import kompi_components.contract as contract

    return contract


def contract_lines(contract: ModuleType) -> list[str]:
    """as_env_lines() first, then the module's remaining scalar constants, sorted."""
    lines = list(contract.as_env_lines())
    seen = {line.split("=", 1)[0] for line in lines}
    for name, value in sorted(vars(contract).items()):
        if name.isupper() and name not in seen and isinstance(value, (str, int)):
            lines.append(f"{name}={value}")
    return lines


def main() -> int:
    for line in contract_lines(load_contract()):
        if "\n" in line:
            raise SystemExit(f"contract value spans lines: {line!r}")
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
