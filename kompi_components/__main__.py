"""kompi's command line: ``bin/kompi render --stack dev`` and friends."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kompi_components import contract
from kompi_components.config import ConfigError
from kompi_components.engine.cli import add_commands as add_engine_commands
from kompi_components.migrate import cli as import_values
from kompi_components.stack_files import StackFileError

EXIT_BAD_INPUT = 2
PROG = "bin/kompi"


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


def _parser() -> argparse.ArgumentParser:
    from kompi_components.render import PREVIEW_NOTE

    # bin/kompi runs this in the project's venv: the one command that works from the user's shell.
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
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
    add_engine_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.run(args))
    except (ConfigError, StackFileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
