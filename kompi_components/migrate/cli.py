"""`bin/kompi import-values values.yaml --stack NAME`: arguments and exit codes."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from kompi_components.config import ConfigError
from kompi_components.migrate.errors import ValuesError
from kompi_components.migrate.stack_writer import stack_path, stack_text, validate_text, write_stack
from kompi_components.migrate.translate import translate
from kompi_components.migrate.translation import Translation
from kompi_components.migrate.values_file import read_all

EXIT_BAD_INPUT = 2
_STACK_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "values", nargs="+", type=Path, help="kube-openmpi values files, merged in order as `helm -f a -f b` does"
    )
    parser.add_argument("--stack", required=True, help="stack name: writes Pulumi.<stack>.yaml")
    parser.add_argument("--dir", default=".", type=Path, help="project directory (default: .)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing stack file")
    parser.add_argument("--release", help="the Helm release name, kompi:clusterName (default: the stack name)")
    parser.add_argument("--namespace", help="the namespace `helm --namespace` gave (default: kompi's)")


def _config_error(error: ConfigError, result: Translation) -> str:
    source = result.source_of(error.key.split(":", 1)[1])
    return f"error: {error}" + (f" (from {source})" if source else "")


def render_hint(stack: str, project_dir: Path) -> str:
    """The render command that works from the user's shell (bin/kompi runs in the caller's directory)."""
    where = "" if project_dir.resolve() == Path.cwd().resolve() else f" --dir {project_dir.resolve()}"
    return f"bin/kompi render --stack {stack}{where}"


def _import(args: argparse.Namespace) -> int:
    if not _STACK_NAME.match(args.stack):
        raise ValuesError("--stack", f"{args.stack!r} is not a stack name (letters, digits, '-', '_', '.')")
    if not args.dir.is_dir():
        raise ValuesError("--dir", f"no directory {args.dir.resolve()}: pass kompi's project directory")
    target = stack_path(args.dir, args.stack)
    if target.exists() and not args.force:
        raise ValuesError(str(target), "exists already; pass --force to overwrite it")
    result = translate(read_all(args.values), args.release or args.stack, args.namespace)
    for notice in result.warnings:
        print(notice.line(), file=sys.stderr)
    text = stack_text(result, args.stack, [str(path) for path in args.values])
    try:
        validate_text(text)
    except ConfigError as error:
        print(_config_error(error, result), file=sys.stderr)
        return EXIT_BAD_INPUT
    write_stack(target, text, args.force)
    if not (args.dir / "Pulumi.yaml").exists():
        print(f"warning: --dir: no Pulumi.yaml in {args.dir}; move {target.name} to kompi's project", file=sys.stderr)
    render = render_hint(args.stack, args.dir)
    print(f"wrote {target} ({len(result.warnings)} warnings); check it offline: {render}")
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        return _import(args)
    except ValuesError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
