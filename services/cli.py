"""The `draplane` command: one subcommand per component, plus the debugging tools.

`main` is also where every command's failures are rendered, once: a
`CommandError` or a bus failure is one ``error: …`` line on stderr with exit
status 1, a closed stdout (``draplane replay | head -1``) ends the command
quietly, and Ctrl-C ends it with 130 — never a traceback. (A long-running
command takes SIGINT and SIGTERM itself, as a request to stop cleanly, and
exits 0: `services.cmd.stopping`.)
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from services.bus.port import BusError
from services.cmd.errors import CommandError
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

EXIT_ERROR = 1
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command ended by Ctrl-C


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
    try:
        result: int = args.run(args)
    except CommandError as exc:
        return _fail(exc.message, status=exc.status)
    except BusError as exc:
        return _fail(one_line(str(exc) or type(exc).__name__), status=EXIT_ERROR)
    except BrokenPipeError:
        # The reader went away (`| head -1`). kubectl, as any Go program writing to a closed stdout,
        # dies of SIGPIPE without a word (the shell shows 141); Python's documented way is to exit
        # quietly with status 1, and to point stdout at /dev/null so that the final flush at exit
        # does not fail again.
        _silence_stdout()
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return result


def one_line(message: str) -> str:
    """A message that may span lines (a topic's differing settings), on one."""
    return "; ".join(line.strip() for line in message.splitlines() if line.strip())


def _fail(message: str, *, status: int) -> int:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    print(f"error: {message}", file=sys.stderr, flush=True)
    return status


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
