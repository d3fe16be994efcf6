"""What the engine compiles: each component's packages, and how many are the same package at another version.

The engine's build time is almost all compiling (`kompi engine build` prints each component's compile time
apart from its downloads), and the components bring the same modules (k8s.io/api, grpc, pulumi's sdk) at
different versions, each of which Go compiles again. This asks `go list -deps` for every built component's
commands and prints, by bytes of Go source compiled (a proxy for compile time):

- each component's packages, and the sum over all: what a cold build compiles today;
- the distinct packages: what it would compile if every component agreed on every version (the floor);
- the modules compiled at several versions, largest first;
- families of components built as one Go module (one version of each dependency across the family).

Run after `bin/kompi engine build`: venv/bin/python bench/engine_packages.py
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kompi_engine.build.gobuild import GoBuild

# families whose versions could be aligned (kubernetes' own commands with the tools built on its libraries;
# pulumi's CLI with the plugins built on its SDK); scheduler-plugins (Kubernetes 1.33's scheduler framework)
# and the bridged random provider (an older pulumi) cannot join theirs
FAMILIES = {
    "kubernetes, kubelet, kwok, coredns, etcd": ("kubernetes", "kubelet", "kwok", "coredns", "etcd"),
    "pulumi, pulumi-yaml, pulumi-kubernetes": ("pulumi", "pulumi-yaml", "pulumi-kubernetes"),
}
TAGS = "selinux,notest,grpcnotrace"  # the Kubernetes commands' build tags (harmless elsewhere)

Package = tuple[str, str]  # (import path, module@version)


def main_packages(source: Path) -> list[str]:
    """The commands a wrapper module builds: its tools.go imports, and its own packages when it has any."""
    tools = source / "tools.go"
    packages = re.findall(r'_ "([^"]+)"', tools.read_text()) if tools.exists() else []
    own = [path for path in source.rglob("*.go") if path.name != "tools.go" and "shim" not in path.parts]
    return packages + (["./..."] if own else [])


def compiled_packages(build: GoBuild, source: Path) -> dict[Package, int]:
    """Every non-standard package the module's commands compile, with its bytes of Go source."""
    listing = build.go_run(
        ["list", "-deps", "-tags", TAGS, "-json=ImportPath,Module,Dir,GoFiles,Standard", *main_packages(source)],
        source,
        f"go list in {source.name}",
    )
    found: dict[Package, int] = {}
    decoder, at = json.JSONDecoder(), 0
    while (at := _skip_space(listing, at)) < len(listing):
        package, at = decoder.raw_decode(listing, at)
        if package.get("Standard"):
            continue
        module = package.get("Module") or {}
        size = sum((Path(package["Dir"]) / name).stat().st_size for name in package.get("GoFiles", []))
        found[(package["ImportPath"], f"{module.get('Path')}@{module.get('Version')}")] = size
    return found


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def megabytes(packages: Iterable[Package], sizes: dict[Package, int]) -> float:
    return sum(sizes[package] for package in set(packages)) / 1e6


def aligned_megabytes(packages: Iterable[Package], sizes: dict[Package, int]) -> float:
    """The same packages with one version each (the largest copy counts)."""
    largest: dict[str, int] = {}
    for package in set(packages):
        largest[package[0]] = max(largest.get(package[0], 0), sizes[package])
    return sum(largest.values()) / 1e6


def _components_at(by_component: dict[str, dict[Package, int]], module_version: str) -> list[str]:
    return [name for name, packages in by_component.items() if any(mv == module_version for _, mv in packages)]


def main() -> None:
    build = GoBuild.default()
    sources = sorted(path for path in (build.root / "src").iterdir() if (path / "go.mod").exists())
    if not sources:
        raise SystemExit("no built components: run bin/kompi engine build first")
    by_component = {source.name: compiled_packages(build, source) for source in sources}
    sizes: dict[Package, int] = {}
    for packages in by_component.values():
        sizes |= packages
    print(f"{'component':20} {'packages':>9} {'MB of Go':>9}")
    for name, packages in by_component.items():
        print(f"{name:20} {len(packages):9} {megabytes(packages, sizes):9.1f}")
    distinct = {package[0] for package in sizes}
    print(
        f"compiled today: {len(sizes)} package versions, {megabytes(sizes, sizes):.0f} MB; every version aligned: "
        f"{len(distinct)} packages, {aligned_megabytes(sizes, sizes):.0f} MB"
    )
    versions: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for (_, module_version), size in sizes.items():
        module, version = module_version.rsplit("@", 1)
        versions[module][version] += size
    repeated = sorted(
        ((sum(v.values()) - max(v.values()), module, sorted(v)) for module, v in versions.items() if len(v) > 1),
        reverse=True,
    )
    print("modules compiled at several versions (MB beyond one version; the components at each):")
    for extra, module, module_versions in repeated[:15]:
        users = {version: _components_at(by_component, f"{module}@{version}") for version in module_versions}
        print(f"  {extra / 1e6:5.1f}  {module}  " + "; ".join(f"{v} {', '.join(c)}" for v, c in users.items()))
    for family, members in FAMILIES.items():
        together = [package for member in members for package in by_component.get(member, {})]
        print(
            f"one module for {family}: {megabytes(together, sizes):.0f} MB today, "
            f"{aligned_megabytes(together, sizes):.0f} MB aligned"
        )


if __name__ == "__main__":
    main()
