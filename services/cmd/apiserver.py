"""`draplane apiserver`: the REST facade, its view of the log and a committer candidate.

On the embedded log in its own ``--data`` it is a stack of its own, and holds
that directory as `draplane up` does (`services.cmd.data_lock`). On Kafka, or
on a log elsewhere, several apiservers may share one log by design.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from aiohttp import web

from services.apiserver.http.auth import TokenAuthenticator
from services.apiserver.service import Apiserver, ApiserverConfig
from services.bus.urls import SqliteTarget, parse_bus_url
from services.cmd import data_lock, stopping
from services.cmd.common import (
    DEFAULT_DATA,
    add_bus_argument,
    add_common_arguments,
    add_runtime_config_argument,
    check_listen,
    default_bus,
    json_logs,
    listening,
    parse_gates,
    parse_listen,
    parse_served,
    until_signalled_or_died,
)
from services.cmd.errors import CommandError
from services.runtime.logs import setup_logging
from services.runtime.metrics_server import serve_metrics


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("apiserver", help="run the apiserver (REST facade and committer candidate)")
    add_bus_argument(p)
    add_common_arguments(p)
    add_runtime_config_argument(p)
    p.add_argument("--data", default=DEFAULT_DATA, help="directory for the view and committer snapshots")
    p.add_argument("--listen", default="127.0.0.1:8080", help="HOST:PORT to serve the API on")
    p.add_argument("--token-auth-file", help="bearer tokens, in kube-apiserver's CSV format")
    p.add_argument("--anonymous", action="store_true", help="allow unauthenticated requests with full rights (demo)")
    p.add_argument("--tls-cert-file", help="serve HTTPS with this certificate")
    p.add_argument("--tls-private-key-file", help="the certificate's key")
    p.add_argument("--max-request-bytes", type=int, default=3 * 1024 * 1024, help="request body limit (413 above)")
    p.add_argument(
        "--max-watches-per-user",
        type=int,
        default=64,
        help="concurrent watch streams one user may hold (429 above; 0: no limit)",
    )
    p.add_argument("--no-committer", action="store_true", help="serve reads only; never take the committer role")
    p.add_argument(
        "--metrics-listen",
        default="",
        help="HOST:PORT to serve /metrics and /healthz on as well (the API port serves /metrics too); off when empty",
    )
    p.set_defaults(run=run)


def config_from(args: argparse.Namespace) -> ApiserverConfig:
    host, port = parse_listen(args.listen)
    return ApiserverConfig(
        bus_url=args.bus or default_bus(args.data),
        data_dir=Path(args.data) / "apiserver",
        host=host,
        port=port,
        authenticator=TokenAuthenticator.from_file(args.token_auth_file) if args.token_auth_file else None,
        anonymous=args.anonymous,
        certfile=args.tls_cert_file,
        keyfile=args.tls_private_key_file,
        max_body_bytes=args.max_request_bytes,
        max_watches_per_user=args.max_watches_per_user,
        run_committer=not args.no_committer,
        gates=parse_gates(args),
        served=parse_served(args.runtime_config),
    )


def embedded_log_under(bus_url: str, data: Path) -> bool:
    """Whether ``bus_url`` is an embedded log inside ``data`` (the default ``<data>/bus.db`` among them)."""
    try:
        target = parse_bus_url(bus_url)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    return isinstance(target, SqliteTarget) and target.path.resolve().is_relative_to(data.resolve())


def run(args: argparse.Namespace) -> int:
    setup_logging("apiserver", level=args.log_level, json=json_logs(args))
    config = config_from(args)
    scheme = "https" if config.certfile else "http"
    data = Path(args.data)
    with contextlib.ExitStack() as held:
        lock = None
        if embedded_log_under(config.bus_url, data):
            lock = held.enter_context(data_lock.holding(data, address=f"{scheme}://{config.host}:{config.port}"))
        check_listen(config.host, config.port)
        if args.metrics_listen:
            check_listen(*parse_listen(args.metrics_listen))
        return _run(args, config, lock=lock, scheme=scheme)


def _run(args: argparse.Namespace, config: ApiserverConfig, *, lock: data_lock.DataDirLock | None, scheme: str) -> int:
    async def main() -> int:
        server = Apiserver(config)
        metrics: web.AppRunner | None = None

        async def start() -> None:
            nonlocal metrics
            with listening(config.host, config.port):
                await server.start()
            if lock is not None:
                lock.update(f"{scheme}://{config.host}:{server.port}")
            if args.metrics_listen:
                metrics = await serve_metrics(args.metrics_listen, [], checks=server.checks())
            await server.wait_ready()

        try:
            await stopping.unless_stopped(start())
            print(f"apiserver ready on {server.port}", flush=True)
            return await until_signalled_or_died(server.tasks, name="apiserver")
        finally:
            await server.stop()  # while /healthz still answers (and says what died)
            if metrics is not None:
                await metrics.cleanup()

    return stopping.run(main)
