"""The Go compiler's own garbage collector: one component's command compiled from an empty build cache, once
with Go's default GC and once with the engine's COMPILER_ENV, alternately, in one run (these machines are noisy).

Prints each compile's wall and CPU seconds and the ratio of the medians, and checks that both settings make
the same binary (the setting changes how the compiler runs, never what it makes).

Run after `bin/kompi engine build` (it reuses the component's wrapper module and the module cache):
    venv/bin/python bench/go_compiler_gc.py [COMPONENT PACKAGE] [ROUNDS]
default: etcd go.etcd.io/etcd/server/v3 2 (about 40 s a compile on 2 cores; kueue sigs.k8s.io/kueue/cmd/kueue
takes about 3 minutes).
"""

from __future__ import annotations

import hashlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kompi_engine.build.gobuild import COMPILER_ENV, GoBuild, build_args


def compile_once(build: GoBuild, source: Path, package: str, gc: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s of go and its children, sha256 of the binary) of one compile from an empty cache."""
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        binary = Path(out) / "bin"
        args = [build.go, *build_args(), "-o", str(binary), package]  # the engine's own compile, less its GC env
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        subprocess.run(args, cwd=source, env=build.env() | {"GOCACHE": cache} | gc, check=True)
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu, hashlib.sha256(binary.read_bytes()).hexdigest()


def main() -> int:
    component, package = (sys.argv[1], sys.argv[2]) if len(sys.argv) > 2 else ("etcd", "go.etcd.io/etcd/server/v3")
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    build = GoBuild.default()
    source = build.root / "src" / component
    if not (source / "go.sum").exists():
        print(f"no wrapper module for {component} in {source}: run bin/kompi engine build first", file=sys.stderr)
        return 1
    settings = {"Go's default GC": {}, " ".join(f"{k}={v}" for k, v in COMPILER_ENV.items()): COMPILER_ENV}
    walls: dict[str, list[float]] = {name: [] for name in settings}
    binaries: set[str] = set()
    for round_ in range(1, rounds + 1):
        for name, gc in settings.items():
            wall, cpu, digest = compile_once(build, source, package, gc)
            walls[name].append(wall)
            binaries.add(digest)
            print(f"round {round_} {name:<28} wall {wall:6.1f} s  cpu {cpu:6.1f} s  sha256 {digest[:12]}")
    default, engine = (statistics.median(times) for times in walls.values())
    print(f"{component} ({package}): median wall {default:.1f} s -> {engine:.1f} s, ratio {engine / default:.2f}")
    if len(binaries) != 1:
        print("the settings made different binaries", file=sys.stderr)
        return 1
    print("the same binary under both settings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
