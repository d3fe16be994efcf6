"""One recording mocks class for every Pulumi test, and a runner for the kompi program."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import Mocks
from pulumi.runtime.mocks import MockMonitor

from kompi_components.components.rollout import handover_outputs

# Pulumi wraps secret values in this envelope on the way to the engine.
SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG_VALUE = "1b47061264138c4ac30d75fd1eb44270"


def is_secret(value: object) -> bool:
    return isinstance(value, dict) and value.get(SECRET_SIG_KEY) == SECRET_SIG_VALUE


def unwrap_secrets(value: Any) -> Any:
    if is_secret(value):
        return unwrap_secrets(value["value"])
    if isinstance(value, dict):
        return {key: unwrap_secrets(item) for key, item in value.items()}
    if isinstance(value, list):
        return [unwrap_secrets(item) for item in value]
    return value


@dataclass
class Registration:
    type_: str
    name: str
    inputs: dict[str, Any]
    urn: str = ""
    parent: str = ""
    dependencies: list[str] = field(default_factory=list)
    provider: str = ""
    aliases: list[str] = field(default_factory=list)  # the names of its aliases
    options: dict[str, Any] = field(default_factory=dict)  # the resource options it was given (those set)


@dataclass
class RecordingMocks(Mocks):
    """Records every registration; ``state`` stands for what Pulumi keeps between runs."""

    state_seed: str = "state-1"
    registrations: list[Registration] = field(default_factory=list)

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.registrations.append(Registration(args.typ, args.name, dict(args.inputs)))
        outputs = dict(args.inputs)
        if args.typ == "pulumi-python:dynamic:Resource" and "wanted" in args.inputs:  # a RollHandover
            outputs |= handover_outputs(args.inputs)
        if args.typ == "random:index/randomBytes:RandomBytes":
            # Same state seed and name -> same bytes, as Pulumi state gives on a second `up`.
            raw = hashlib.sha256(f"{self.state_seed}/{args.name}".encode()).digest()[: int(args.inputs["length"])]
            outputs |= {"base64": base64.b64encode(raw).decode(), "hex": raw.hex()}
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, None

    def of_type(self, prefix: str) -> list[Registration]:
        return [r for r in self.registrations if r.type_.startswith(prefix)]

    def named(self, type_: str, name: str) -> Registration:
        return next(r for r in self.registrations if r.type_ == type_ and r.name == name)


class RecordingMonitor(MockMonitor):
    """Adds what the mocks cannot see to each registration: its URN, parent and dependencies."""

    def __init__(self, mocks: RecordingMocks) -> None:
        super().__init__(mocks)
        self.recording = mocks

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            registration = self.recording.named(request.type, request.name)
            registration.urn = response.urn
            registration.parent = request.parent
            registration.dependencies = list(request.dependencies)
            registration.provider = request.provider
            registration.aliases = [alias.spec.name for alias in request.aliases if alias.spec.name]
            registration.options = resource_options(request)
        return response


def resource_options(request: Any) -> dict[str, Any]:
    """The options of a RegisterResourceRequest that were set: what retains, protects or ignores."""
    timeouts = request.customTimeouts
    options = {
        "protect": request.protect,
        "retainOnDelete": request.retainOnDelete,
        "deleteBeforeReplace": request.deleteBeforeReplace,
        "ignoreChanges": sorted(request.ignoreChanges),
        "replaceOnChanges": sorted(request.replaceOnChanges),
        "additionalSecretOutputs": sorted(request.additionalSecretOutputs),
        "customTimeouts": {
            key: getattr(timeouts, key) for key in ("create", "update", "delete") if getattr(timeouts, key)
        },
        "deletedWith": request.deletedWith,
    }
    return {key: value for key, value in options.items() if value}


def run_body(
    body: Callable[[], Any], mocks: RecordingMocks | None = None, stack: str = "test", preview: bool = False
) -> RecordingMocks:
    """Run ``body`` (a Pulumi program) under mocks and wait for every registration; ``preview``: as
    `pulumi preview` does, where an unknown value stays unknown."""
    mocks = mocks or RecordingMocks()
    pulumi.runtime.set_mocks(mocks, project="kompi", stack=stack, preview=preview, monitor=RecordingMonitor(mocks))
    pulumi.runtime.test(body)()
    return mocks


def run_program(config: dict[str, str], mocks: RecordingMocks | None = None, stack: str = "test") -> RecordingMocks:
    """Run kompi's Pulumi program under mocks with ``config`` and wait for every registration."""
    from kompi_components import program

    mocks = mocks or RecordingMocks()
    pulumi.runtime.set_mocks(mocks, project="kompi", stack=stack, preview=False, monitor=RecordingMonitor(mocks))

    @pulumi.runtime.test
    def body() -> None:
        pulumi.runtime.set_all_config(config)
        program.run()

    body()
    return mocks


KUBERNETES_PREFIX = "kubernetes:"


def registered_manifests(mocks: RecordingMocks) -> list[dict[str, Any]]:
    """The Kubernetes objects the program registered, as manifests (secrets unwrapped)."""
    manifests = []
    for registration in mocks.of_type(KUBERNETES_PREFIX):
        inputs = unwrap_secrets(registration.inputs)
        manifests.append(inputs)
    return manifests
