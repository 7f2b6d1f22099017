"""Arguments and set-up shared by the subcommands: the bus URL, logging, data dirs."""

from __future__ import annotations

import argparse
import os

DEFAULT_DATA = ".draplane"


def default_bus(data: str = DEFAULT_DATA) -> str:
    return os.environ.get("DRAPLANE_BUS") or f"sqlite:///{os.path.abspath(os.path.join(data, 'bus.db'))}"


def add_bus_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bus",
        default=None,
        help="the log: kafka://host:port[,host:port] or sqlite:///path/to/bus.db "
        "(default: $DRAPLANE_BUS, else sqlite:///<data>/bus.db)",
    )
