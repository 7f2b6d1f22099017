"""The `draplane` command: one subcommand per component, plus the debugging tools."""

from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMANDS = (
    "apiserver",
    "controller-manager",
    "driver",
    "explain",
    "nodeagent",
    "replay",
    "scheduler",
    "topics",
    "up",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draplane", description="Kubernetes Dynamic Resource Allocation on an event log."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMANDS:
        importlib.import_module(f"services.cmd.{name.replace('-', '_')}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
