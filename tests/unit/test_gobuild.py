"""kompi_engine.build.gobuild.build_components: components in progress at once, their compiles one at a time."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from kompi_engine.build import gobuild
from kompi_engine.build.gobuild import (
    COMPILE_FLAGS,
    COMPILER_ENV,
    BuildError,
    BuildTimes,
    Component,
    GoBuild,
    build_components,
)

WAIT = 30.0  # only reached when the behaviour is broken


def test_a_component_downloads_while_another_compiles_and_no_two_compile_at_once(tmp_path: Path) -> None:
    build = GoBuild(tmp_path, "go")
    second_downloading = threading.Event()
    compiling, overlaps, order = [0], [], []
    lock = threading.Lock()

    def compile_step(name: str) -> None:
        with build.compiling():
            with lock:
                compiling[0] += 1
                overlaps.append(compiling[0])
            if name == "first":  # still compiling when the second starts its download
                assert second_downloading.wait(WAIT), "the second component waited for the first's compile"
            with lock:
                compiling[0] -= 1
                order.append(name)

    def first(_: GoBuild) -> None:
        compile_step("first")

    def second(_: GoBuild) -> None:
        second_downloading.set()  # its go mod tidy, say
        compile_step("second")

    components = [Component("first", (), "1", first), Component("second", (), "2", second)]
    build_components(build, components, lambda _: None)

    assert order == ["first", "second"]
    assert max(overlaps) == 1  # one compile at a time
    assert all(build.up_to_date(c.name, c.stamp, ()) for c in components)

    # A second build of the same versions does no Go work: nothing made, each component up to date.
    made_again: list[str] = []
    lines: list[str] = []
    again = [Component(c.name, c.binaries, c.stamp, lambda _, n=c.name: made_again.append(n)) for c in components]
    assert build_components(build, again, lines.append) == {}
    assert made_again == [] and lines == ["first: up to date (1)", "second: up to date (2)"]


def test_the_first_failure_is_raised_and_the_components_not_started_are_not_built(tmp_path: Path) -> None:
    build = GoBuild(tmp_path, "go")
    made: list[str] = []

    def fails(_: GoBuild) -> None:
        raise BuildError("the Go module proxy did not serve x@v1: 403")

    def later(name: str) -> Component:
        return Component(name, (), "1", lambda _: made.append(name))

    with pytest.raises(BuildError, match="did not serve x@v1"):
        build_components(build, [Component("broken", (), "1", fails), *map(later, "abcdef")], lambda _: None, 1)
    assert made == []  # one at a time: nothing after the failure started
    assert not build.up_to_date("broken", "1", ())


class StepClock:
    """gobuild's clock, moved on only by the test: the times a build reports are then exact. ``watch(event)``:
    the next reading this thread takes sets ``event``."""

    def __init__(self) -> None:
        self.now = 0.0
        self._watch = threading.local()

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def watch(self, event: threading.Event) -> None:
        self._watch.event = event

    def monotonic(self) -> float:
        event: threading.Event | None = getattr(self._watch, "event", None)
        if event is not None:
            self._watch.event = None
            event.set()
        return self.now

    def time(self) -> float:
        return 1_700_000_000.0 + self.now


def test_each_component_is_told_its_compile_time_apart_from_its_wait_for_the_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = StepClock()
    monkeypatch.setattr(gobuild, "time", clock)
    build = GoBuild(tmp_path, "go")
    first_compiles, second_asks = threading.Event(), threading.Event()

    def first(_: GoBuild) -> None:
        with build.compiling():  # at 0, granted at once
            first_compiles.set()
            assert second_asks.wait(WAIT), "the second component never asked for the compiler"
            clock.advance(3)  # its compile ends at 5; the second waits from 2

    def second(_: GoBuild) -> None:
        assert first_compiles.wait(WAIT)
        clock.advance(2)  # downloading 0 -> 2
        clock.watch(second_asks)  # its ask for the compiler reads the clock at 2
        with build.compiling():  # granted at 5, once the first's compile ends
            pass

    lines: list[str] = []
    times = build_components(
        build, [Component("first", (), "1", first), Component("second", (), "2", second)], lines.append
    )

    assert times["first"] == BuildTimes(started=1_700_000_000.0, total=5, compiling=5, waiting=0)
    assert times["second"] == BuildTimes(started=1_700_000_000.0, total=5, compiling=0, waiting=3)
    assert times["second"].other == 2
    assert "second: built in 5 s: compiling 0 s, waiting for the compiler 3 s, downloads and the rest 2 s" in lines


def test_a_build_runs_go_build_with_the_compiler_settings_and_renames_its_binary_into_bin(tmp_path: Path) -> None:
    """Every compile gets the flags and the compiler's GC settings (byte-identical binaries in less time:
    bench/go_compiler_gc.py); the binary appears in bin/ only once go has written it whole."""
    seen = tmp_path / "seen"
    fake_go = tmp_path / "go"
    fake_go.write_text(
        "#!/bin/sh\n"
        f'echo "$* GOGC=$GOGC GOMEMLIMIT=$GOMEMLIMIT" > {seen}\n'
        'while [ "$1" != "-o" ]; do shift; done\n'
        'echo binary > "$2"\n'
    )
    fake_go.chmod(0o755)
    build = GoBuild(tmp_path / "engine", str(fake_go))

    build.build("example.com/cmd/tool", "tool", tmp_path, ldflags="-X main.version=1")

    ran = seen.read_text().split()
    assert ran[0] == "build" and ran[-3:] == [
        "example.com/cmd/tool",
        f"GOGC={COMPILER_ENV['GOGC']}",
        f"GOMEMLIMIT={COMPILER_ENV['GOMEMLIMIT']}",
    ]
    assert all(flag in ran for flag in COMPILE_FLAGS) and "main.version=1" in ran
    assert (build.bin / "tool").read_text() == "binary\n" and not (build.bin / "tool.tmp").exists()
