"""The Pulumi CLI and the kubernetes and random resource providers, built from the Go module proxy."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

from kompi_engine import versions
from kompi_engine.build.gobuild import BuildError, Component, GoBuild

PULUMI_PKG = "github.com/pulumi/pulumi/pkg/v3"
PULUMI_SDK = "github.com/pulumi/pulumi/sdk/v3"
KUBERNETES_PROVIDER = "github.com/pulumi/pulumi-kubernetes/provider/v4"
KUBERNETES_CMD = "cmd/pulumi-resource-kubernetes"
TERRAFORM_RANDOM = "github.com/terraform-providers/terraform-provider-random"
TERRAFORM_BRIDGE = "github.com/pulumi/pulumi-terraform-bridge/v3"
PLUGIN_SDK = "github.com/hashicorp/terraform-plugin-sdk/v2"
PULUMI_PLUGIN_SDK = "github.com/pulumi/terraform-plugin-sdk/v2"
# our Go glue: the random provider's main and tfgen programs, and the shim module that may import the TF provider
GLUE = Path(__file__).parent / "go"
RANDOM_SHIM = f"{TERRAFORM_RANDOM}/kompishim"
PULUMI_YAML = "github.com/pulumi/pulumi-yaml"
YAML_HOST_CMD = f"{PULUMI_YAML}/cmd/pulumi-language-yaml"
RANDOM_MODULE = "kompi.local/pulumi-random"


def _go_line(go_mod: str) -> str:
    found = re.search(r"^go (\S+)", go_mod, re.MULTILINE)
    return found.group(1) if found else "1.26.0"


def _remote_replaces(go_mod: str) -> str:
    """An upstream module's `replace` lines that point at other modules (local paths do not carry over)."""
    lines = re.findall(r"^\s*(?:replace\s+)?(\S+(?: \S+)? => \S+ v\S+)\s*$", go_mod, re.MULTILINE)
    return "".join(f"replace {line}\n" for line in lines)


def _make_pulumi(build: GoBuild) -> None:
    version = f"v{versions.PULUMI}"
    upstream = (build.module_dir(PULUMI_PKG, version) / "go.mod").read_text()
    build.module_dir(PULUMI_SDK, version)
    go_mod = (
        f"module kompi.local/pulumi\n\ngo {_go_line(upstream)}\n\n"
        f"require (\n\t{PULUMI_PKG} {version}\n\t{PULUMI_SDK} {version}\n)\n\n{_remote_replaces(upstream)}"
    )
    source = build.wrapper_module("pulumi", go_mod, {}, [f"{PULUMI_PKG}/cmd/pulumi"])
    ldflags = f"-X {PULUMI_SDK}/go/common/version.Version={version}"
    build.build(f"{PULUMI_PKG}/cmd/pulumi", "pulumi", source, ldflags=ldflags)


def _make_kubernetes_provider(build: GoBuild) -> None:
    module = build.module_dir(KUBERNETES_PROVIDER, versions.PULUMI_KUBERNETES_MODULE_VERSION)
    upstream = (module / "go.mod").read_text()
    go_mod = (
        f"module kompi.local/pulumi-kubernetes\n\ngo {_go_line(upstream)}\n\n"
        f"require {KUBERNETES_PROVIDER} {versions.PULUMI_KUBERNETES_MODULE_VERSION}\n\n{_remote_replaces(upstream)}"
    )
    command = module / KUBERNETES_CMD
    source = build.wrapper_module("pulumi-kubernetes", go_mod, {"main.go": (command / "main.go").read_text()}, [])
    # the two embedded files are git-ignored upstream, so the module lacks them: the schema with its version, and
    # the terraform mapping, both as compact JSON
    schema = json.loads((command / "schema.json").read_text())
    schema["version"] = versions.PULUMI_KUBERNETES
    (source / "schema-embed.json").write_text(json.dumps(schema, separators=(",", ":")))
    mapping = json.loads((command / "terraform-mapping.json").read_text())
    (source / "terraform-mapping-embed.json").write_text(json.dumps(mapping, separators=(",", ":")))
    ldflags = f"-X {KUBERNETES_PROVIDER}/pkg/version.Version={versions.PULUMI_KUBERNETES}"
    build.build(".", "pulumi-resource-kubernetes", source, ldflags=ldflags)


def _glue_files() -> dict[str, str]:
    root = GLUE / "random"
    return {str(path.relative_to(root)): path.read_text() for path in sorted(root.rglob("*.go"))}


def _glue_digest() -> str:
    return hashlib.sha256(json.dumps(_glue_files(), sort_keys=True).encode()).hexdigest()[:8]


def _random_go_mod(bridge: Path) -> str:
    pulumi = f"v{versions.PULUMI_FOR_BRIDGE}"  # pinned: the bridge does not compile against the CLI's newer pulumi
    return (
        f"module {RANDOM_MODULE}\n\ngo {_go_line((bridge / 'go.mod').read_text())}\n\nrequire (\n"
        f"\t{TERRAFORM_BRIDGE} v{versions.TERRAFORM_BRIDGE}\n\t{PULUMI_PKG} {pulumi}\n\t{PULUMI_SDK} {pulumi}\n"
        f"\t{TERRAFORM_RANDOM} {versions.TERRAFORM_RANDOM_MODULE_VERSION}\n\t{RANDOM_SHIM} v0.0.0\n)\n\n"
        f"replace {RANDOM_SHIM} => ./shim\n\n"
        f"replace {PLUGIN_SDK} => {PULUMI_PLUGIN_SDK} {versions.PULUMI_TERRAFORM_PLUGIN_SDK}\n"
    )


def _run_tfgen(tfgen: Path, out: Path, upstream: Path, env: dict[str, str]) -> None:
    result = subprocess.run(
        [str(tfgen), "schema", "--out", str(out), "--skip-examples"],
        cwd=out.parent,
        env=env | {"KOMPI_RANDOM_UPSTREAM": str(upstream)},
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        tail = " | ".join((result.stderr or result.stdout).strip().splitlines()[-4:])
        raise BuildError(f"pulumi-tfgen-random (schema of the bridged {TERRAFORM_RANDOM}) failed: {tail}")


def _make_random_provider(build: GoBuild) -> None:
    upstream = build.module_dir(TERRAFORM_RANDOM, versions.TERRAFORM_RANDOM_MODULE_VERSION)
    bridge = build.module_dir(TERRAFORM_BRIDGE, f"v{versions.TERRAFORM_BRIDGE}")
    build.module_dir(PULUMI_PLUGIN_SDK, versions.PULUMI_TERRAFORM_PLUGIN_SDK)
    shim_go_mod = f"module {RANDOM_SHIM}\n\ngo {_go_line((upstream / 'go.mod').read_text())}\n"
    command = build.source_dir("pulumi-random") / "cmd" / "pulumi-resource-random"
    command.mkdir(parents=True, exist_ok=True)
    for generated in ("schema.json", "bridge-metadata.json"):  # placeholders until tfgen has written them
        if not (command / generated).exists():
            (command / generated).write_text("{}")
    files = _glue_files() | {"shim/go.mod": shim_go_mod}
    source = build.wrapper_module("pulumi-random", _random_go_mod(bridge), files, [])
    version = f"-X {RANDOM_MODULE}/provider.Version={versions.PULUMI_RANDOM}"
    tfgen = source / "pulumi-tfgen-random"
    build.compile(
        "./cmd/pulumi-tfgen-random",
        tfgen,
        source,
        "pulumi-tfgen-random (the random provider's schema generator)",
        ldflags=version,
    )
    out = source / "tfgen-out"
    _run_tfgen(tfgen, out, upstream, build.env())
    schema = json.loads((out / "schema.json").read_text())
    schema["version"] = versions.PULUMI_RANDOM  # tfgen leaves it out
    (command / "schema.json").write_text(json.dumps(schema, indent=2))
    (command / "bridge-metadata.json").write_text((out / "bridge-metadata.json").read_text())
    build.build("./cmd/pulumi-resource-random", "pulumi-resource-random", source, ldflags=version)


def _make_yaml_language_host(build: GoBuild) -> None:
    """pulumi-language-yaml, built with the pulumi pkg/sdk its own go.mod asks for (a wrapper module that
    requires pulumi-yaml alone lets Go pick exactly those)."""
    version = f"v{versions.PULUMI_YAML}"
    upstream = (build.module_dir(PULUMI_YAML, version) / "go.mod").read_text()
    go_mod = (
        f"module kompi.local/pulumi-yaml\n\ngo {_go_line(upstream)}\n\n"
        f"require {PULUMI_YAML} {version}\n\n{_remote_replaces(upstream)}"
    )
    source = build.wrapper_module("pulumi-yaml", go_mod, {}, [YAML_HOST_CMD])
    ldflags = f"-X {PULUMI_YAML}/pkg/version.Version={version}"
    build.build(YAML_HOST_CMD, "pulumi-language-yaml", source, ldflags=ldflags)


COMPONENTS: tuple[Component, ...] = (
    Component("pulumi", ("pulumi",), f"pulumi-{versions.PULUMI}", _make_pulumi),
    Component(
        "pulumi-kubernetes",
        ("pulumi-resource-kubernetes",),
        f"pulumi-kubernetes-{versions.PULUMI_KUBERNETES}",
        _make_kubernetes_provider,
    ),
    Component(
        "pulumi-random",
        ("pulumi-resource-random",),
        f"pulumi-random-{versions.PULUMI_RANDOM}-bridge-{versions.TERRAFORM_BRIDGE}-glue-{_glue_digest()}",
        _make_random_provider,
    ),
    Component(
        "pulumi-yaml", ("pulumi-language-yaml",), f"pulumi-yaml-{versions.PULUMI_YAML}", _make_yaml_language_host
    ),
)
