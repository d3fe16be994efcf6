"""``kompi run``: the run client (RunClient) from a terminal. bin/kompi has it, and so has the ``kompi`` command
that ``pip install`` puts on PATH."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING

from kompi_components.runs import commands
from kompi_components.runs.errors import BadRequest, KompiRunRefused, RunFailed, RunsError, RunTimeout
from kompi_components.runs.status import RunStatus

if TYPE_CHECKING:
    from kompi_components.cli import Commands
    from kompi_components.runs.client import RunClient

PROG = "kompi run"
EXIT_FAILED, EXIT_BAD_INPUT, EXIT_TIMEOUT, EXIT_DETACHED = 1, 2, 124, 130


def _client(args: argparse.Namespace) -> RunClient:
    from kompi_components.runs.client import RunClient  # (the kubernetes package: for this command only)

    if bool(args.stack) == bool(args.outputs):
        raise BadRequest("which cluster: --stack NAME (its Pulumi.NAME.yaml, in --dir) or --outputs FILE (its outputs)")
    if args.stack:
        return RunClient.from_stack(args.dir, args.stack, args.kubeconfig, args.context)
    try:
        text = sys.stdin.read() if args.outputs == "-" else open(args.outputs).read()  # noqa: SIM115
    except OSError as error:
        raise BadRequest(f"--outputs {args.outputs}: cannot read it: {error.strerror}") from None
    try:
        outputs = json.loads(text)
    except json.JSONDecodeError as error:
        try:  # bin/kompi up's whole output: its last line is the outputs
            outputs = json.loads(text.strip().splitlines()[-1]) if text.strip() else None
        except json.JSONDecodeError:
            raise BadRequest(f"--outputs {args.outputs}: not JSON ({error.msg}): expected a stack's outputs") from None
    if not isinstance(outputs, dict):
        raise BadRequest(f"--outputs {args.outputs}: expected a JSON object of stack outputs")
    return RunClient.from_outputs(outputs, args.kubeconfig, args.context)


def _row(status: RunStatus) -> str:
    code = "" if status.exit_code is None else str(status.exit_code)
    restarts = f"{status.attempt}/{status.restarts}"
    return f"{status.name:24} {status.state:10} {restarts:8} {code:4}  {' '.join(status.command)}"


def _print_status(status: RunStatus, as_json: bool) -> None:
    print(json.dumps(asdict(status), default=str, indent=1) if as_json else status.describe())


def _follow(runs: RunClient, name: str) -> int:
    try:
        for text in runs.follow(name):
            sys.stdout.write(text)
            sys.stdout.flush()
    except KeyboardInterrupt:
        print(f"\n{PROG}: detached; the run goes on ({PROG} logs -f {name} follows it again)", file=sys.stderr)
        return EXIT_DETACHED
    return _ended(runs.status(name))


def _ended(status: RunStatus) -> int:
    if status.succeeded:
        return 0
    return status.exit_code or EXIT_FAILED


def _run(args: argparse.Namespace) -> int:
    runs = _client(args)
    action = args.action
    if action == "start":
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        env = dict(args.env or [])
        started = runs.start(
            command, name=args.name, ranks=args.ranks, env=env, restarts=args.restarts, workers=args.workers
        )
        print(f"{PROG}: run {started.name} started ({PROG} logs -f {started.name} follows it)", file=sys.stderr)
        return 0 if args.detach else _follow(runs, started.name)
    if action == "list":
        listed = runs.runs()
        if args.json:
            print(json.dumps([asdict(status) for status in listed], default=str, indent=1))
        else:
            print(f"{'NAME':24} {'STATE':10} {'RESTARTS':8} {'EXIT':4}  COMMAND")
            for status in listed:
                print(_row(status))
        return 0
    if action == "status":
        _print_status(runs.status(args.name), args.json)
        return 0
    if action == "logs":
        if args.follow:
            _follow(runs, args.name)
            return 0
        sys.stdout.write(runs.logs(args.name))
        return 0
    if action == "wait":
        status = runs.wait(args.name, args.timeout)
        print(status.describe())
        return 0
    if action == "stop":
        print(runs.stop(args.name).describe())
        return 0
    if action == "cat":
        sys.stdout.buffer.write(runs.read_file(args.path))
        return 0
    print(runs.copy_from(args.path, args.destination))
    return 0


def run_command(args: argparse.Namespace) -> int:
    """Errors as one line (or, for a failed run, its line and last lines); the exit codes of kompi-run."""
    try:
        return _run(args)
    except RunFailed as failed:
        print(f"{PROG}: {failed}", file=sys.stderr)
        return failed.exit_code or EXIT_FAILED
    except RunTimeout as late:
        print(f"{PROG}: {late}", file=sys.stderr)
        return EXIT_TIMEOUT
    except (BadRequest, KompiRunRefused) as refused:
        print(f"{PROG}: {refused}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RunsError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return EXIT_FAILED


def _env(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not commands.ENV_KEY.fullmatch(key):
        raise argparse.ArgumentTypeError(f"{text!r}: expected KEY=VALUE, KEY of letters, digits and '_'")
    return key, value


def _count(low: int, high: int | None = None) -> argparse._ActionType:
    def parse(text: str) -> int:
        if not text.isdigit() or int(text) < low or (high is not None and int(text) > high):
            upper = f" to {high}" if high is not None else " or more"
            raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number from {low}{upper}")
        return int(text)

    return parse


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected seconds, a number >= 0")
    return value


def add_commands(commands_: Commands) -> None:
    target = argparse.ArgumentParser(add_help=False)
    which = target.add_argument_group("the cluster (one of --stack and --outputs)")
    which.add_argument("--stack", help="a stack of this project: the names its Pulumi.STACK.yaml gives the cluster")
    which.add_argument("--dir", default=".", help="the project directory of --stack (default: .)")
    which.add_argument(
        "--outputs", metavar="FILE", help="the stack's outputs as JSON (pulumi stack output --json; - reads stdin)"
    )
    which.add_argument("--kubeconfig", help="path (default: the stack's kubernetes:kubeconfig, else $KUBECONFIG)")
    which.add_argument("--context", help="kubeconfig context (default: the stack's, else the current one)")

    run = commands_.add_parser(
        "run",
        help="runs on the cluster's master that outlive this terminal (kompi-run, over the Kubernetes API)",
        description="Runs on a kompi cluster's master (the image's kompi-run) over the Kubernetes API's exec.",
    )
    actions = run.add_subparsers(dest="action", required=True)
    start = actions.add_parser("start", parents=[target], help="start a run; it goes on when this command ends")
    start.add_argument("--name", help="the run's name (default run-DATE-TIME)")
    start.add_argument("--ranks", type=_count(1), help="run the command as `mpiexec -n RANKS COMMAND`")
    start.add_argument(
        "--env", type=_env, action="append", metavar="KEY=VALUE", help="for the command and every rank (repeat)"
    )
    start.add_argument("--restarts", type=_count(0, commands.MAX_RESTARTS), default=0, help="0 to 100 (default 0)")
    start.add_argument("--workers", type=_count(0), help="workers to wait for before each attempt (default: all)")
    start.add_argument("--detach", action="store_true", help="return at once instead of following the output")
    start.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND...")
    listed = actions.add_parser("list", parents=[target], help="every run: state, restarts, exit code")
    listed.add_argument("--json", action="store_true")
    state = actions.add_parser("status", parents=[target], help="one run's state")
    state.add_argument("name")
    state.add_argument("--json", action="store_true")
    logs = actions.add_parser("logs", parents=[target], help="a run's output")
    logs.add_argument("name")
    logs.add_argument("--follow", "-f", action="store_true", help="to the run's end (Ctrl-C detaches)")
    until = actions.add_parser("wait", parents=[target], help="until a run ends; exits with its exit code")
    until.add_argument("name")
    until.add_argument("--timeout", type=_seconds, help="seconds; then exit 124, the run going on")
    halt = actions.add_parser("stop", parents=[target], help="end a run: mpiexec and every rank")
    halt.add_argument("name")
    cat = actions.add_parser("cat", parents=[target], help="a file of the master's container, to stdout")
    cat.add_argument("path", help="absolute, e.g. /checkpoints/digits/result.json")
    copy = actions.add_parser("cp", parents=[target], help="a file or directory of the master's container, to here")
    copy.add_argument("path", help="absolute, e.g. /checkpoints/digits")
    copy.add_argument("destination", help="a new path, or a directory to copy into")
    run.set_defaults(run=run_command)
