"""kompi's own commands (render, contract, import-values, config-table, change-table, run); ``bin/kompi`` adds the
local engine's (kompi_engine) to them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from kompi_components import contract
from kompi_components.config import ConfigError
from kompi_components.migrate import cli as import_values
from kompi_components.runs.cli import add_commands as add_run_commands
from kompi_components.stack_files import StackFileError

EXIT_BAD_INPUT = 2
PROG = "bin/kompi"

if TYPE_CHECKING:
    Commands: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]


def _render(args: argparse.Namespace) -> int:
    from kompi_components.render import preview_header, render_stack, to_yaml

    sys.stdout.write(preview_header(args.stack) + to_yaml(render_stack(Path(args.dir), args.stack)))
    return 0


def _contract(_: argparse.Namespace) -> int:
    print("\n".join(contract.as_env_lines()))
    return 0


def _config_table(_: argparse.Namespace) -> int:
    from kompi_components.config.reference import config_table

    print(config_table())
    return 0


def _change_table(_: argparse.Namespace) -> int:
    from kompi_components.impact.table import change_table

    print(change_table())
    return 0


def add_commands(commands: Commands) -> None:
    from kompi_components.render import PREVIEW_NOTE

    render = commands.add_parser(
        "render",
        help="print every object a stack would create, as YAML (a preview, not for kubectl apply)",
        description=f"Print every object `pulumi up --stack STACK` would create, as YAML; {PREVIEW_NOTE}.",
    )
    render.add_argument("--stack", required=True, help="stack name: reads Pulumi.<stack>.yaml")
    render.add_argument("--dir", default=".", help="project directory (default: .)")
    render.set_defaults(run=_render)
    shared = commands.add_parser("contract", help="print the names shared with the images (KEY=VALUE)")
    shared.set_defaults(run=_contract)
    values = commands.add_parser("import-values", help="write Pulumi.<stack>.yaml from a kube-openmpi values.yaml")
    import_values.add_arguments(values)
    values.set_defaults(run=import_values.run)
    table = commands.add_parser("config-table", help="print the README's config reference table (Markdown)")
    table.set_defaults(run=_config_table)
    changes = commands.add_parser(
        "change-table", help="print docs/changes.md's table: what changing each config key does to a running cluster"
    )
    changes.set_defaults(run=_change_table)
    add_run_commands(commands)


def parser(*more: Callable[[Commands], None]) -> argparse.ArgumentParser:
    """kompi's commands and those that ``more`` adds (the local engine's)."""
    # bin/kompi runs this in the project's venv: the one command that works from the user's shell.
    made = argparse.ArgumentParser(prog=PROG, description=__doc__)
    commands = made.add_subparsers(dest="command", required=True)
    for add in (add_commands, *more):
        add(commands)
    return made


def main(argv: list[str] | None = None, *more: Callable[[Commands], None]) -> int:
    args = parser(*more).parse_args(argv)
    try:
        return int(args.run(args))
    except (ConfigError, StackFileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
