"""The installable package: the product alone (never the local engine), one version, dependency ranges."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from kompi_components import contract
from tests.stacks import REPO

PRODUCT = REPO / "kompi_components"


def _imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_the_product_never_imports_the_engine() -> None:
    importers = [
        str(path.relative_to(REPO))
        for path in sorted(PRODUCT.rglob("*.py"))
        if any(module.split(".")[0] == "kompi_engine" for module in _imported_modules(path))
    ]
    assert importers == []


def test_importing_every_product_module_loads_no_engine_module() -> None:
    modules = [
        ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for path in sorted(PRODUCT.rglob("*.py"))
        if path.name != "__main__.py"
    ]
    script = "import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module(m)\n"
    script += "print(sorted(m for m in sys.modules if m.split('.')[0] == 'kompi_engine'))"
    result = subprocess.run([sys.executable, "-c", script, *modules], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def build_wheel(out: Path) -> Path:
    """kompi's wheel, built from a copy of what the package is made of (setuptools writes its build tree into
    the source directory: not into the shared checkout)."""
    source = out / "source"
    shutil.copytree(PRODUCT, source / PRODUCT.name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(out)]
    result = subprocess.run([*command, str(source)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    (built,) = out.glob("kompi-*.whl")
    return built


@pytest.mark.parametrize(
    "module",
    [
        "kompi_components.components.rollout",  # what the dynamic-provider process imports first
        "kompi_components.components.data_guard",
        "kompi_components.components.cluster",
        "kompi_components.api",
        "kompi_components.provider",
        "kompi_components.runs",  # a notebook's import (RunClient)
        "kompi_components.cli",  # the `kompi` console script
    ],
)
def test_each_entry_module_imports_on_its_own(module: str) -> None:
    result = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def _metadata(wheel: Path) -> tuple[list[str], dict[str, list[str]]]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (meta,) = [name for name in names if name.endswith(".dist-info/METADATA")]
        parsed = Parser().parsestr(archive.read(meta).decode())
    return names, {key: parsed.get_all(key) or [] for key in ("Version", "Requires-Dist")}


def test_the_wheel_holds_the_product_and_nothing_of_the_engine_or_the_tests(wheel: Path) -> None:
    names, _ = _metadata(wheel)
    packages = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert packages == {"kompi_components"}
    assert "kompi_components/components/cluster.py" in names


def test_pip_install_puts_kompi_s_own_commands_on_path(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        (entry_points,) = [name for name in archive.namelist() if name.endswith(".dist-info/entry_points.txt")]
        scripts = archive.read(entry_points).decode()
    assert "kompi = kompi_components.cli:main" in scripts.splitlines()  # `kompi run ...` after pip install


def test_the_package_version_is_the_contracts(wheel: Path) -> None:
    _, meta = _metadata(wheel)
    assert meta["Version"] == [contract.KOMPI_VERSION]
    assert wheel.name.startswith(f"kompi-{contract.KOMPI_VERSION}-")
    assert contract.DEFAULT_IMAGE_TAG.endswith(f"-{contract.KOMPI_VERSION}")


def _pins(requirements: Path) -> dict[str, str]:
    pins = {}
    for line in requirements.read_text().splitlines():
        if line.strip() and not line.startswith(("#", "-r")):
            requirement = Requirement(line)
            pins[requirement.name.lower().replace("_", "-")] = str(requirement.specifier).removeprefix("==")
    return pins


def test_runtime_dependencies_are_ranges_that_the_pinned_environment_meets(wheel: Path) -> None:
    _, meta = _metadata(wheel)
    required = {Requirement(line).name.lower(): Requirement(line) for line in meta["Requires-Dist"]}
    pins = _pins(REPO / "requirements.txt")
    assert set(required) == set(pins), "requirements.txt pins exactly the package's runtime dependencies"
    for name, requirement in required.items():
        operators = {spec.operator for spec in requirement.specifier}
        assert operators == {">=", "<"}, f"{requirement}: a compatible range, not a pin"
        assert requirement.specifier.contains(pins[name]), f"requirements.txt's {name}=={pins[name]} is outside it"
