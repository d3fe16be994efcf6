"""Reading a live cluster in the end-to-end tests: kubectl as JSON, and "is the render inside the live object"."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kompi_components.kube.conditions import is_ready


class Kubectl:
    def __init__(self, binary: Path, kubeconfig: Path) -> None:
        self.binary = binary
        self.kubeconfig = kubeconfig

    def run(self, *args: str, check: bool = True, input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(self.binary), "--kubeconfig", str(self.kubeconfig), *args],
            capture_output=True,
            text=True,
            input=input_text,
            check=False,
            timeout=60,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {result.stderr.strip()}")
        return result

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json").stdout)

    def get(self, kind: str, name: str, namespace: str | None) -> dict[str, Any] | None:
        scope = ["-n", namespace] if namespace else []
        result = self.run("get", kind, name, *scope, "-o", "json", "--ignore-not-found", check=False)
        return json.loads(result.stdout) if result.stdout.strip() else None

    def items(self, kind: str, namespace: str, selector: str | None = None) -> list[dict[str, Any]]:
        extra = ["-l", selector] if selector else []
        return list(self.json("get", kind, "-n", namespace, *extra)["items"])


def resource_of(manifest: dict[str, Any]) -> str:
    """kubectl's fully qualified resource for a manifest (kind.group), so CRDs with short names resolve."""
    group = manifest["apiVersion"].split("/")[0] if "/" in manifest["apiVersion"] else ""
    return f"{manifest['kind'].lower()}.{group}" if group else manifest["kind"].lower()


def differences(rendered: Any, live: Any, path: str = "") -> list[str]:
    """Where ``rendered`` is not contained in ``live`` (the API server adds defaults; it may not change ours)."""
    if isinstance(rendered, dict):
        if not isinstance(live, dict):
            return [f"{path}: {live!r} is not a map"]
        found: list[str] = []
        for key, value in rendered.items():
            if key not in live:
                if value not in (False, 0, "", [], {}, None):  # the API server omits zero values (omitempty)
                    found.append(f"{path}.{key}: missing")
            else:
                found += differences(value, live[key], f"{path}.{key}")
        return found
    if isinstance(rendered, list):
        if not isinstance(live, list) or len(rendered) != len(live):
            return [f"{path}: {len(rendered)} items rendered, live has {live!r}"]
        return [
            d for i, (r, v) in enumerate(zip(rendered, live, strict=True)) for d in differences(r, v, f"{path}[{i}]")
        ]
    if rendered != live and str(rendered) != str(live):
        return [f"{path}: rendered {rendered!r}, live {live!r}"]
    return []


def comparable(manifest: dict[str, Any]) -> dict[str, Any]:
    """The rendered Secret holds placeholders, and the API server keeps stringData as data: compare key names."""
    if manifest["kind"] == "Secret" and "stringData" in manifest:
        return {key: value for key, value in manifest.items() if key != "stringData"}
    return manifest


def run_command(
    label: str, command: list[str], *, cwd: Path, env: dict[str, str], timeout: float, check: bool, tail: int
) -> subprocess.CompletedProcess[str]:
    """``command`` run to its end; with ``check``, a failure is an AssertionError with the last ``tail``
    characters of each stream."""
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if check and result.returncode != 0:
        raise AssertionError(f"{label} exited {result.returncode}:\n{result.stdout[-tail:]}\n{result.stderr[-tail:]}")
    return result


def wait_until(what: str, condition: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.5)


def pods_ready(kubectl: Kubectl, namespace: str) -> bool:
    """Every pod that is not a finished Job pod is Ready (and there is at least one)."""
    pods = [pod for pod in kubectl.items("pods", namespace) if pod["status"].get("phase") != "Succeeded"]
    return bool(pods) and all(is_ready(pod) for pod in pods)


def provider_plugins(project: Path) -> set[int]:
    """The pids of the Pulumi provider plugins (the Python dynamic one included) of ``project``'s operations:
    the CLI runs them in the project's .kompi/stacks/<stack>; other tests' may run beside."""
    return {
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _is_plugin(_command_line(entry)) and _works_in(entry, project)
    }


def _is_plugin(command_line: str) -> bool:
    return "pulumi-resource-" in command_line or "-m\0pulumi.dynamic\0" in command_line


def _command_line(process: Path) -> str:
    try:
        return (process / "cmdline").read_text(errors="replace")
    except OSError:
        return ""


def _works_in(process: Path, directory: Path) -> bool:
    try:
        return Path(os.readlink(process / "cwd")).is_relative_to(directory)
    except OSError:
        return False


def live_object(kubectl: Kubectl, manifest: dict[str, Any]) -> dict[str, Any] | None:
    return kubectl.get(resource_of(manifest), manifest["metadata"]["name"], manifest["metadata"].get("namespace"))


def live_differences(kubectl: Kubectl, rendered: list[dict[str, Any]]) -> list[str]:
    """What of the rendered objects is missing or different on the API server."""
    problems = []
    for manifest in rendered:
        live = live_object(kubectl, manifest)
        where = f"{manifest['kind']}/{manifest['metadata']['name']}"
        if live is None:
            problems.append(f"{where}: not on the API server")
            continue
        problems += [f"{where}{d}" for d in differences(comparable(manifest), live)]
    return problems
