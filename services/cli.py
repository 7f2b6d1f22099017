"""The `draplane` command: one subcommand per component, plus the debugging tools."""

from __future__ import annotations

import argparse
import importlib
import sys

from services.runtime import gc_pause

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
    gc_pause.tune_for_a_long_lived_heap()  # every subcommand builds views of the log
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
