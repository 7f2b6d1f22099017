"""`draplane up`: the whole stack in one process, with simulated GPU nodes.

By default everything runs on the embedded log in ``--data``; starting again
with the same ``--data`` resumes the same cluster. One stack at a time holds a
``--data`` (`services.cmd.data_lock`): a second one refuses, naming the first.

``--tls`` serves HTTPS with a self-signed certificate that is its own CA
(``<data>/pki``, made once), embedded in the written kubeconfig as
``certificate-authority-data``: kubectl sends bearer tokens only over TLS, so
this is what makes ``--token-auth-file`` usable with kubectl. The kubeconfig
(readable by its owner only) carries the token file's first token, as a
cluster installer's admin kubeconfig carries the admin's credentials.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from services.apiserver.certs import CertificateError, self_signed
from services.apiserver.http.auth import TokenAuthenticator, TokenFileError
from services.apiserver.kubeconfig import write_kubeconfig
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
from services.driver.inventory import InventoryError
from services.driver.profiles import DriverProfile, parse_profile_spec
from services.runtime.logs import setup_logging
from services.runtime.metrics_server import serve_metrics
from services.stack import LocalStack, StackConfig


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("up", help="run every component in one process, with simulated GPU nodes")
    add_bus_argument(p)
    add_common_arguments(p)
    add_runtime_config_argument(p)
    p.add_argument("--data", default=DEFAULT_DATA, help="where the cluster's state lives (default: .draplane)")
    p.add_argument("--listen", default="127.0.0.1:8080", help="HOST:PORT of the API (default: 127.0.0.1:8080)")
    p.add_argument("--nodes", type=int, default=2, help="simulated nodes node-1 … node-N (default: 2)")
    p.add_argument(
        "--driver-profile",
        action="append",
        default=[],
        metavar="KIND[,OPTION...]",
        help="what the next node's driver publishes (repeatable: the first is node-1's, ...; nodes past the list "
        "get eight plain GPUs; --nodes grows to the number given). KIND gpu or net; options partitions=N, count=N, "
        "shared, binding-conditions, binds-to-node, driver=NAME, taint=DEVICE=KEY[=VALUE]:EFFECT, "
        "health=DEVICE=Healthy|Unhealthy|Unknown. Examples: gpu,partitions=4  gpu,shared  net  "
        "gpu,binding-conditions  (examples/README.md says which demo needs which)",
    )
    p.add_argument(
        "--metrics-listen",
        default="",
        help="HOST:PORT to serve the whole process's /metrics and /healthz on as well "
        "(the API serves /metrics too); off when empty",
    )
    p.add_argument(
        "--token-auth-file",
        help="require bearer tokens from this file (kube-apiserver's CSV format) instead of anonymous access; "
        "kubectl sends tokens only over HTTPS, so use it with --tls",
    )
    p.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS with a self-signed certificate (made once in <data>/pki, valid for 127.0.0.1 and "
        "localhost); the kubeconfig trusts it",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    setup_logging("draplane", level=args.log_level, json=json_logs(args))
    parse_gates(args)  # a bad --emulated-version or --feature-gates is one line before --data is touched
    parse_profiles(args.driver_profile)  # so is a bad --driver-profile
    host, port = parse_listen(args.listen)
    metrics_address = parse_listen(args.metrics_listen) if args.metrics_listen else None
    data = Path(args.data).resolve()
    # Before anything is written: another stack on this --data, or on these ports, is one line.
    scheme = "https" if args.tls else "http"
    with data_lock.holding(data, address=f"{scheme}://{host}:{port}") as lock:
        check_listen(host, port)
        if metrics_address is not None:
            check_listen(*metrics_address)
        return _run(args, data=data, host=host, port=port, lock=lock)


def _run(args: argparse.Namespace, *, data: Path, host: str, port: int, lock: data_lock.DataDirLock) -> int:
    certfile = keyfile = None
    if args.tls:
        try:
            cert, key = self_signed(data / "pki")
        except CertificateError as exc:
            raise CommandError(str(exc)) from None
        certfile, keyfile = str(cert), str(key)
    authenticator = None
    if args.token_auth_file:
        try:
            authenticator = TokenAuthenticator.from_file(args.token_auth_file)
        except (OSError, TokenFileError) as exc:
            raise CommandError(str(exc)) from None
    profiles = parse_profiles(args.driver_profile)
    config = StackConfig(
        bus_url=args.bus or default_bus(str(data)),
        data_dir=data,
        host=host,
        port=port,
        nodes=max(args.nodes, len(profiles)),
        node_profiles=profiles,
        gates=parse_gates(args),
        served=parse_served(args.runtime_config),
        authenticator=authenticator,
        anonymous=args.token_auth_file is None,
        certfile=certfile,
        keyfile=keyfile,
    )

    kubeconfig = data / "kubeconfig"
    shown = os.path.relpath(kubeconfig)
    if shown.startswith(".."):
        shown = str(kubeconfig)

    def announce(stack: LocalStack) -> None:
        lock.update(stack.url)
        token = authenticator.first_token() if authenticator is not None else None
        write_kubeconfig(kubeconfig, stack.url, ca_file=certfile, token=token)
        print(
            f"\nTo use it:\n  export KUBECONFIG={shown}\n  kubectl get nodes\n"
            "  kubectl apply -f examples/gpu-test1.yaml\n  kubectl get pods -n gpu-test1\n",
            flush=True,
        )
        if token is not None and certfile is None:
            print(
                "Note: kubectl sends the kubeconfig's token only over HTTPS; start with --tls to use kubectl.",
                flush=True,
            )
        print(ready_line(stack.url, terminal=sys.stdout.isatty()), flush=True)

    async def main() -> int:
        print(f"draplane: starting on {config.bus_url} with {config.nodes} node(s); data in {data}", flush=True)
        # The metrics port was checked before anything started; a port taken since is the API's.
        with listening(host, port):
            return await serve(LocalStack(config), metrics_listen=args.metrics_listen, on_ready=announce)

    return stopping.run(main)


def parse_profiles(specs: list[str]) -> tuple[tuple[str, DriverProfile], ...]:
    """The ``--driver-profile`` values, node by node; a bad one is a one-line error."""
    try:
        return tuple(parse_profile_spec(spec) for spec in specs)
    except InventoryError as err:
        raise CommandError(f"--driver-profile: {err}") from None


def ready_line(url: str, *, terminal: bool) -> str:
    """``draplane is ready: URL (Ctrl-C to stop)``; on a terminal in bold green, so it stands out from the log."""
    line = f"draplane is ready: {url} (Ctrl-C to stop)"
    return f"\033[1;32m{line}\033[0m" if terminal else line


async def serve(stack: LocalStack, *, metrics_listen: str, on_ready: Callable[[LocalStack], None]) -> int:
    """Start ``stack`` and run it until SIGINT/SIGTERM (0) or until a component task dies (1).

    A death is logged with its traceback, and ``/healthz`` (on ``metrics_listen``)
    fails naming the task while everything stops; the process then exits
    non-zero rather than run on half-dead (docs/architecture.md).
    """
    metrics: web.AppRunner | None = None

    async def start() -> None:
        nonlocal metrics
        await stack.start()
        # "ready" means usable: the API answers and every component, the simulated nodes' agents
        # included, has caught up (so `kubectl wait node --all` right after it finds the nodes).
        await stack.wait_ready()
        if metrics_listen:
            metrics = await serve_metrics(metrics_listen, stack.metrics_registries(), checks=stack.checks())

    try:
        await stopping.unless_stopped(start())
        on_ready(stack)
        return await until_signalled_or_died(*stack.supervised(), name="draplane")
    finally:
        print("draplane: stopping", flush=True)
        await stack.stop()  # while /healthz still answers (and says what died)
        if metrics is not None:
            await metrics.cleanup()
