"""Arguments and set-up shared by the subcommands: the bus URL, gates, logging, signals, task deaths."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal

from services.kube.feature_gates import FeatureGateError, FeatureGates
from services.runtime.supervised import Supervised

log = logging.getLogger(__name__)

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


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--feature-gates",
        default="",
        help="kube's syntax, e.g. DynamicResourceAllocation=true,DRAControlPlaneController=false",
    )
    parser.add_argument("--log-level", default=os.environ.get("DRAPLANE_LOG_LEVEL", "INFO"))
    parser.add_argument("--plain-logs", action="store_true", help="human-readable logs instead of JSON")


def parse_gates(value: str) -> FeatureGates:
    try:
        return FeatureGates.parse(value)
    except FeatureGateError as exc:
        raise SystemExit(f'invalid argument {value!r} for "--feature-gates" flag: {exc}') from None


def parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise SystemExit(f"--listen must be HOST:PORT, got {value!r}")
    return host or "127.0.0.1", int(port)


async def run_until_signalled() -> None:
    """Block until SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


async def until_signalled_or_died(*groups: Supervised, name: str) -> int:
    """Block until SIGINT or SIGTERM (0), or until a task of ``groups`` dies (1: the process must not run on
    half-dead; its supervisor restarts it)."""
    signalled = asyncio.create_task(run_until_signalled())
    deaths = [asyncio.create_task(group.wait_death()) for group in groups]
    try:
        done, _ = await asyncio.wait({signalled, *deaths}, return_when=asyncio.FIRST_COMPLETED)
        died = next((d for d in deaths if d in done), None)
        if died is None:
            return 0
        log.error("%s exits with status 1: %s", name, died.result())
        return 1
    finally:
        for task in (signalled, *deaths):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
