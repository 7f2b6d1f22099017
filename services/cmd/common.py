"""Arguments and set-up shared by the subcommands: bus URL, gates, logging, signals, task deaths, listen address."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import os
import socket
from collections.abc import Iterator

from services.api.types.served import RuntimeConfigError, ServedVersions, parse_runtime_config
from services.bus.port import Bus
from services.bus.urls import SqliteTarget, parse_bus_url
from services.cmd import stopping
from services.cmd.errors import CommandError
from services.kube.emulated_version import EmulatedVersionError, flag_help, parse_emulated_version
from services.kube.feature_gates import FeatureGateError, FeatureGates
from services.runtime import logs
from services.runtime.supervised import Supervised
from topics.declarations import declarations

log = logging.getLogger(__name__)

DEFAULT_DATA = ".draplane"


def default_bus(data: str = DEFAULT_DATA) -> str:
    return os.environ.get("DRAPLANE_BUS") or f"sqlite:///{os.path.abspath(os.path.join(data, 'bus.db'))}"


def log_to_read(args: argparse.Namespace) -> str:
    """The bus URL of a command that only reads the log (``--bus``, else ``<--data>/bus.db``): it must exist.

    Such a command never creates a log: `CommandError` for a malformed URL, and
    ``no log at PATH`` for an embedded log whose file is not there (a mistyped
    ``--data``). A Kafka log is checked when it is opened: an unreachable
    broker or a missing topic is a `BusError`, reported in one line by
    `services.cli` — so the Kafka client's own error lines, which Python's
    last-resort handler would print (these commands set up no logging), are
    silenced.
    """
    url: str = args.bus or default_bus(args.data)
    try:
        target = parse_bus_url(url)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if isinstance(target, SqliteTarget) and not target.path.is_file():
        raise CommandError(f"no log at {target.path.resolve()}")
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL + 1)
    return url


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
        help="kube's syntax, e.g. DRAControlPlaneController=true,DRAConsumableCapacity=false; "
        "which gates exist, their defaults and locks depend on --emulated-version",
    )
    parser.add_argument("--emulated-version", default="", help=flag_help())
    parser.add_argument("--log-level", default=os.environ.get("DRAPLANE_LOG_LEVEL", "INFO"))
    parser.add_argument(
        "--log-format",
        choices=logs.FORMATS,
        default=logs.AUTO,
        help="text (timestamp level component message key=value) or json lines; "
        "auto (default): text when stderr is a terminal, else json",
    )
    parser.add_argument("--plain-logs", action="store_true", help="the same as --log-format text")


def json_logs(args: argparse.Namespace) -> bool:
    """Whether this command logs JSON lines (``--log-format``, ``--plain-logs``, whether stderr is a terminal)."""
    return logs.wants_json(logs.TEXT if args.plain_logs else args.log_format)


def add_runtime_config_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runtime-config",
        default="",
        help="API versions to serve, kube-apiserver's syntax, e.g. resource.k8s.io/v1beta1=false,api/alpha=false "
        "(default: every version: resource.k8s.io v1, v1beta2, v1beta1 and v1alpha3)",
    )


def parse_served(value: str) -> ServedVersions:
    try:
        return parse_runtime_config(value)
    except RuntimeConfigError as exc:
        raise SystemExit(f'invalid argument {value!r} for "--runtime-config" flag: {exc}') from None


def parse_release(value: str) -> str:
    """``--emulated-version``'s release (default 1.37); a value kube would refuse is one line."""
    try:
        return parse_emulated_version(value)
    except EmulatedVersionError as exc:
        raise SystemExit(exc.flag_error(value)) from None


def parse_gates(args: argparse.Namespace) -> FeatureGates:
    """``--feature-gates`` at ``--emulated-version``'s release (`add_common_arguments`)."""
    release = parse_release(args.emulated_version)
    value: str = args.feature_gates
    try:
        return FeatureGates.parse(value, release=release)
    except FeatureGateError as exc:
        raise SystemExit(f'invalid argument {value!r} for "--feature-gates" flag: {exc}') from None


def parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise SystemExit(f"--listen must be HOST:PORT, got {value!r}")
    return host or "127.0.0.1", int(port)


def check_listen(host: str, port: int) -> None:
    """`CommandError` before anything starts when ``host:port`` cannot be listened on (in use, not local).

    It binds as the server will (asyncio's ``create_server``: ``SO_REUSEADDR``,
    IPv6 sockets IPv6 only) and lets go at once. Port 0 (any free port) always
    passes.
    """
    if port == 0:
        return
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                raise CommandError(f"cannot listen on {host}:{port}: {_reason(exc)}") from None


@contextlib.contextmanager
def listening(host: str, port: int) -> Iterator[None]:
    """Around a server's start: the port taken since `check_listen` looked is the same one line."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in (errno.EADDRINUSE, errno.EADDRNOTAVAIL):
            raise
        raise CommandError(f"cannot listen on {host}:{port}: {_reason(exc)}") from None


def _reason(exc: OSError) -> str:
    return os.strerror(exc.errno).lower() if exc.errno else str(exc)


async def start_bus(bus: Bus) -> None:
    """A component's start: ``bus`` started, draplane's topics declared on it (`stopping.unless_stopped`)."""
    await bus.start()
    await bus.ensure_topics(declarations())


async def until_signalled_or_died(*groups: Supervised, name: str) -> int:
    """Block until SIGINT or SIGTERM (0), or until a task of ``groups`` dies (1: the process must not run on
    half-dead; its supervisor restarts it).

    A signal that came before this was called counts: it returns 0 at once
    (the handlers are in place from the command's start on: `stopping`).
    """
    signalled = asyncio.ensure_future(stopping.requested().wait())
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
