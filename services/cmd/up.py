"""`draplane up`: the whole stack in one process, with simulated GPU nodes.

By default everything runs on the embedded log in ``--data``; starting again
with the same ``--data`` resumes the same cluster. One stack at a time holds a
``--data`` (`services.cmd.data_lock`): a second one refuses, naming the first.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Callable
from pathlib import Path

from services.apiserver.http.auth import TokenAuthenticator
from services.apiserver.kubeconfig import write_kubeconfig
from services.cmd import data_lock
from services.cmd.common import (
    DEFAULT_DATA,
    add_bus_argument,
    add_common_arguments,
    add_runtime_config_argument,
    check_listen,
    default_bus,
    listening,
    parse_gates,
    parse_listen,
    parse_served,
    until_signalled_or_died,
)
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
        "--metrics-listen",
        default="",
        help="HOST:PORT to serve the whole process's /metrics and /healthz on as well "
        "(the API serves /metrics too); off when empty",
    )
    p.add_argument(
        "--token-auth-file",
        help="require bearer tokens from this file (kube-apiserver's CSV format) instead of anonymous access",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    setup_logging("draplane", level=args.log_level, json=not args.plain_logs)
    host, port = parse_listen(args.listen)
    metrics_address = parse_listen(args.metrics_listen) if args.metrics_listen else None
    data = Path(args.data).resolve()
    # Before anything is written: another stack on this --data, or on these ports, is one line.
    with data_lock.holding(data, address=f"http://{host}:{port}") as lock:
        check_listen(host, port)
        if metrics_address is not None:
            check_listen(*metrics_address)
        return _run(args, data=data, host=host, port=port, lock=lock)


def _run(args: argparse.Namespace, *, data: Path, host: str, port: int, lock: data_lock.DataDirLock) -> int:
    config = StackConfig(
        bus_url=args.bus or default_bus(str(data)),
        data_dir=data,
        host=host,
        port=port,
        nodes=args.nodes,
        gates=parse_gates(args.feature_gates),
        served=parse_served(args.runtime_config),
        authenticator=TokenAuthenticator.from_file(args.token_auth_file) if args.token_auth_file else None,
        anonymous=args.token_auth_file is None,
    )

    kubeconfig = data / "kubeconfig"
    shown = os.path.relpath(kubeconfig)
    if shown.startswith(".."):
        shown = str(kubeconfig)

    def announce(stack: LocalStack) -> None:
        lock.update(stack.url)
        write_kubeconfig(kubeconfig, stack.url)
        print(
            f"\nTo use it:\n  export KUBECONFIG={shown}\n  kubectl get nodes\n"
            "  kubectl apply -f examples/gpu-test1.yaml\n  kubectl get pods -n gpu-test1\n",
            flush=True,
        )
        print(f"draplane is ready: {stack.url} (Ctrl-C to stop)", flush=True)

    async def main() -> int:
        print(f"draplane: starting on {config.bus_url} with {config.nodes} node(s); data in {data}", flush=True)
        # The metrics port was checked before anything started; a port taken since is the API's.
        with listening(host, port):
            return await serve(LocalStack(config), metrics_listen=args.metrics_listen, on_ready=announce)

    return asyncio.run(main())


async def serve(stack: LocalStack, *, metrics_listen: str, on_ready: Callable[[LocalStack], None]) -> int:
    """Start ``stack`` and run it until SIGINT/SIGTERM (0) or until a component task dies (1).

    A death is logged with its traceback, and ``/healthz`` (on ``metrics_listen``)
    fails naming the task while everything stops; the process then exits
    non-zero rather than run on half-dead (docs/architecture.md).
    """
    metrics = None
    try:
        await stack.start()
        # "ready" means usable: the API answers and every component, the simulated nodes' agents
        # included, has caught up (so `kubectl wait node --all` right after it finds the nodes).
        await stack.wait_ready()
        if metrics_listen:
            metrics = await serve_metrics(metrics_listen, stack.metrics_registries(), checks=stack.checks())
        on_ready(stack)
        return await until_signalled_or_died(*stack.supervised(), name="draplane")
    finally:
        print("draplane: stopping", flush=True)
        await stack.stop()  # while /healthz still answers (and says what died)
        if metrics is not None:
            await metrics.cleanup()
