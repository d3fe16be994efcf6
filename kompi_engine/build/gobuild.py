"""Go builds from the module proxy into the engine cache: wrapper modules, stamps, clear errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kompi_engine import paths


class BuildError(RuntimeError):
    """A component could not be built; the message names the module and what went wrong."""


# One compile at a time, each with every core (go build -p): the components' downloads (go mod tidy and
# download: the module proxy, unzipping) go on meanwhile, since they wait on the network more than on
# the CPUs. A cold build spent a third to half of its time downloading with the CPUs idle.
_COMPILER = threading.Lock()
COMPONENTS_AT_ONCE = 3
# Every `go build`'s compiler flags. -dwarf=false: the linker drops debug information anyway (-w), so the
# compiler need not make it: 13% less compile time (etcd from an empty cache, 2-core machine: 73.7 -> 63.9 s
# of CPU), the same binaries otherwise.
COMPILE_FLAGS = ("-trimpath", "-gcflags=all=-dwarf=false")
# The compiler's and linker's own garbage collector: none until a process holds 2 GiB (the limit then makes it
# collect). Byte-identical binaries in 6-11% less time than Go's default, which the compiler already tunes
# when GOGC is unset (bench/go_compiler_gc.py, empty cache, 2 cores: etcd 39.0 -> 34.9 s, kueue 165 -> 155 s;
# an explicit GOGC=100 would be slower than either). A compile rarely nears the limit (etcd's peak 0.6 GiB),
# so the two compiles and a link of `go build -p 2` hold a few GiB at most.
COMPILER_ENV = {"GOGC": "off", "GOMEMLIMIT": "2GiB"}
# the times of the component that this thread builds (set by _build_one), which GoBuild.compiling adds to
_BUILDING = threading.local()


def build_args(ldflags: str = "", tags: str = "") -> list[str]:
    """The arguments of every ``go build`` the engine runs, up to its ``-o`` and package: every core, the
    compile flags, stripped binaries."""
    args = ["build", "-p", str(os.cpu_count() or 1), *COMPILE_FLAGS, "-ldflags", f"-s -w {ldflags}".strip()]
    return [*args, "-tags", tags] if tags else args


@dataclass
class BuildTimes:
    """Where one component's build time went: its compiles alone, its waits for the compile slot, the rest
    (downloads, go mod tidy, generators) is ``total`` less both."""

    started: float = 0.0  # epoch seconds
    total: float = 0.0
    compiling: float = 0.0
    waiting: float = 0.0

    @property
    def other(self) -> float:
        return max(0.0, self.total - self.compiling - self.waiting)


def go_binary() -> str:
    found = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
    if found is None:
        raise BuildError("go is not installed (the engine is built from the Go module proxy with `go`)")
    return found


@dataclass(frozen=True)
class GoBuild:
    """One engine tree: runs `go` with reproducible settings and records what was built."""

    root: Path
    go: str

    @classmethod
    def default(cls) -> GoBuild:
        return cls(paths.engine_dir(), go_binary())

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def source_dir(self, name: str) -> Path:
        path = self.root / "src" / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def env(self) -> dict[str, str]:
        # local toolchain only, module mode everywhere, static binaries; proxy and sumdb stay the user's
        return os.environ | {"GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod -buildvcs=false", "CGO_ENABLED": "0"}

    def go_run(self, args: Sequence[str], cwd: Path, what: str, extra_env: dict[str, str] | None = None) -> str:
        """Run ``go ARGS`` at low priority; a failure raises BuildError naming ``what`` and go's last lines."""
        result = subprocess.run(
            ["nice", "-n", "10", self.go, *args],
            cwd=cwd,
            env=self.env() | (extra_env or {}),
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            tail = " | ".join(line for line in result.stderr.strip().splitlines()[-4:])
            raise BuildError(f"{what}: go {args[0]} failed: {tail}")
        return result.stdout

    def module_dir(self, module: str, version: str) -> Path:
        """Download ``module@version`` into the module cache; a refused version is named plainly."""
        result = subprocess.run(
            [self.go, "mod", "download", "-json", f"{module}@{version}"],
            cwd=self.source_dir("download"),
            env=self.env(),
            capture_output=True,
            text=True,
            check=False,
        )
        try:
            info = json.loads(result.stdout or "{}")
        except json.JSONDecodeError:
            info = {}
        if result.returncode != 0 or "Error" in info or "Dir" not in info:
            reason = info.get("Error") or result.stderr.strip().splitlines()[-1:] or ["no answer"]
            raise BuildError(f"the Go module proxy did not serve {module}@{version}: {reason}")
        return Path(info["Dir"])

    @contextmanager
    def compiling(self) -> Iterator[None]:
        """Hold the one compile slot (every ``go build``, of a binary or of a generator); the time spent
        waiting for it and holding it counts to the component this thread builds."""
        asked = time.monotonic()
        with _COMPILER:
            granted = time.monotonic()
            try:
                yield
            finally:
                times: BuildTimes | None = getattr(_BUILDING, "times", None)
                if times is not None:
                    times.waiting += granted - asked
                    times.compiling += time.monotonic() - granted

    def compile(self, package: str, target: Path, cwd: Path, what: str, *, ldflags: str = "", tags: str = "") -> None:
        """``go build`` one package into ``target``, holding the compile slot, with every core."""
        with self.compiling():
            self.go_run([*build_args(ldflags, tags), "-o", str(target), package], cwd, what, COMPILER_ENV)

    def build(self, package: str, output: str, cwd: Path, *, ldflags: str = "", tags: str = "") -> None:
        """``go build`` one package into bin/OUTPUT (written under a temporary name, then renamed)."""
        self.bin.mkdir(parents=True, exist_ok=True)
        target = self.bin / output
        self.compile(package, Path(f"{target}.tmp"), cwd, f"{package} (for {output})", ldflags=ldflags, tags=tags)
        os.replace(f"{target}.tmp", target)

    def wrapper_module(self, name: str, go_mod: str, files: dict[str, str], tools: Sequence[str] = ()) -> Path:
        """src/NAME: a module (go.mod, FILES, a tools.go importing TOOLS) that `go mod tidy` resolves
        whenever its inputs change; returns its directory."""
        source = self.source_dir(name)
        imports = "".join(f'\t_ "{tool}"\n' for tool in tools)
        files = files | {"tools.go": f"//go:build tools\n\npackage tools\n\nimport (\n{imports})\n"} if tools else files
        inputs = json.dumps({"go.mod": go_mod, **files}, sort_keys=True)
        stamp = source / "kompi-inputs.json"
        for relative, text in files.items():
            (source / relative).parent.mkdir(parents=True, exist_ok=True)
            (source / relative).write_text(text)
        if not (source / "go.sum").exists() or not stamp.exists() or stamp.read_text() != inputs:
            (source / "go.mod").write_text(go_mod)
            self.go_run(["mod", "tidy"], source, f"wrapper module {name}")
            stamp.write_text(inputs)
        return source

    # -- stamps: a component is up to date when its binaries exist and its stamp matches its versions
    def _stamp(self, name: str) -> Path:
        return self.root / "stamps" / name

    def up_to_date(self, name: str, stamp: str, binaries: Sequence[str]) -> bool:
        path = self._stamp(name)
        return (
            path.exists()
            and path.read_text() == stamp
            and all(os.access(self.bin / binary, os.X_OK) for binary in binaries)
        )

    def mark_built(self, name: str, stamp: str) -> None:
        path = self._stamp(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(stamp)


@dataclass(frozen=True)
class Component:
    """Something ``kompi engine build`` makes: its binaries and the versions that decide a rebuild."""

    name: str
    binaries: tuple[str, ...]
    stamp: str
    make: Callable[[GoBuild], None]


def build_components(
    build: GoBuild, components: Sequence[Component], log: Callable[[str], None], at_once: int = COMPONENTS_AT_ONCE
) -> dict[str, BuildTimes]:
    """Build what is missing or stale, ``at_once`` components in progress (their compiles one at a time, in
    GoBuild.compiling), one progress line per component with its time; returns the times of those built.
    After a failure no other component starts; the ones in progress finish, and the first failure is raised."""
    stale = []
    for component in components:
        if build.up_to_date(component.name, component.stamp, component.binaries):
            log(f"{component.name}: up to date ({component.stamp})")
        else:
            stale.append(component)
    failed, printing = threading.Event(), threading.Lock()

    def one_line(line: str) -> None:  # whole lines, from any thread
        with printing:
            log(line)

    built: dict[str, BuildTimes] = {}
    with ThreadPoolExecutor(at_once) as pool:
        futures = [pool.submit(_build_one, build, component, one_line, failed, built) for component in stale]
        for future in futures:
            future.result()
    return built


def _build_one(
    build: GoBuild,
    component: Component,
    log: Callable[[str], None],
    failed: threading.Event,
    built: dict[str, BuildTimes],
) -> None:
    if failed.is_set():
        return
    started = time.monotonic()
    times = _BUILDING.times = BuildTimes(started=time.time())
    log(f"{component.name}: building {component.stamp} ...")
    try:
        component.make(build)
    except BaseException:
        failed.set()
        raise
    finally:
        _BUILDING.times = None
        times.total = time.monotonic() - started
    build.mark_built(component.name, component.stamp)
    built[component.name] = times
    log(
        f"{component.name}: built in {times.total:.0f} s: compiling {times.compiling:.0f} s, waiting for the "
        f"compiler {times.waiting:.0f} s, downloads and the rest {times.other:.0f} s"
    )
