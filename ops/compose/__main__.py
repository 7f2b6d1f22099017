"""``python -m ops.compose`` (``ops/compose/run-local``): docker-compose.yml's services as local processes.

    ops/compose/run-local [-f docker-compose.yml] [--workdir DIR] [--kafka HOST:PORT] [--prefix P]
                          [--free-ports] [--print]

The broker is ``--kafka``, else ``$KAFKA_BOOTSTRAP_SERVERS``, else one this
command starts with ``ops/kafka/start`` in ``<workdir>/kafka`` (and stops on
exit). Volumes, logs, the kubeconfig and ``services.json`` (what runs where)
live in ``--workdir`` (default ``.cache/compose``); starting again with the
same workdir and broker resumes the same cluster. Ctrl-C (or SIGTERM) stops
the services, dependents first.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from ops.compose.localize import Plan, Settings, plan
from ops.compose.model import ComposeError, ComposeFile, load
from ops.compose.supervisor import StackError, Supervisor
from services.apiserver.kubeconfig import write_kubeconfig
from services.testing.ports import free_port, kafka_answers

REPO = Path(__file__).resolve().parents[2]
DEFAULT_FILE = REPO / "docker-compose.yml"
DEFAULT_WORKDIR = REPO / ".cache" / "compose"
KAFKA_ENV = "KAFKA_BOOTSTRAP_SERVERS"
PREFIX = "run-local: "


def report(message: str) -> None:
    print(PREFIX + message, flush=True)


def check_published_ports(local: Plan) -> None:
    for name, service in local.services.items():
        for target, port in service.published.items():
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers bind: TIME_WAIT is no conflict
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    raise StackError(
                        f"host port {port} (service {name}, port {target}) is in use; "
                        "stop what holds it, or use --free-ports"
                    ) from None


def api_url(compose: ComposeFile, local: Plan) -> str | None:
    """The apiserver's URL on this host: the service running ``draplane apiserver`` and its published port."""
    for name, service in compose.services.items():
        command = service.command or ()
        if command[:1] == ("apiserver",) and name in local.services and local.services[name].published:
            port = next(iter(local.services[name].published.values()))
            scheme = "https" if any(w.startswith("--tls-cert-file") for w in command) else "http"
            return f"{scheme}://127.0.0.1:{port}"
    return None


def show(local: Plan) -> None:
    for name, stands_in in local.external.items():
        print(f"{name}: not run; the local broker {stands_in} stands in for it")
    for name, service in local.services.items():
        print(f"{name}:")
        print(f"  argv: {json.dumps(list(service.argv))}")
        print(f"  environment: {json.dumps(dict(service.compose_env))}")
        print(f"  cwd: {service.cwd}")
        if service.ports:
            print(f"  ports (container: host): {json.dumps({str(k): v for k, v in service.ports.items()})}")
        if service.health:
            print(f"  healthcheck: {json.dumps(list(service.health))}")
        if service.depends_on:
            print(f"  depends_on: {json.dumps(dict(service.depends_on))}")
        print(f"  restart: {service.restart}")


class Broker:
    """The broker to use: given, from the environment, or started here (and stopped at the end)."""

    def __init__(self, given: str | None, workdir: Path) -> None:
        self.servers = given or os.environ.get(KAFKA_ENV, "").strip()
        self.data = workdir / "kafka"
        self.owned = False

    def start(self) -> str:
        if self.servers:
            if not kafka_answers(self.servers):
                raise StackError(f"no Kafka broker answers at {self.servers}")
            return self.servers
        report(f"starting a Kafka broker in {self.data} (ops/kafka/start)")
        result = subprocess.run(
            [str(REPO / "ops" / "kafka" / "start"), "--data", str(self.data)],
            stdout=subprocess.PIPE,
            text=True,
            check=False,
        )
        line = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
        if result.returncode != 0 or not line.startswith(f"{KAFKA_ENV}="):
            raise StackError("the Kafka broker did not start (see above)")
        self.owned = True
        self.servers = line.partition("=")[2]
        return self.servers

    def stop(self) -> None:
        if self.owned:
            subprocess.run([str(REPO / "ops" / "kafka" / "stop"), "--data", str(self.data)], check=False)


async def serve(compose: ComposeFile, local: Plan, workdir: Path) -> int:
    supervisor = Supervisor(local, report=report)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    status = workdir / "services.json"
    up = asyncio.create_task(supervisor.up())
    stopper = asyncio.create_task(stop.wait())
    failed = False
    try:
        await asyncio.wait({up, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if up.done():
            up.result()  # raises StackError
            status.write_text(json.dumps(supervisor.status(), indent=2) + "\n")
            url = api_url(compose, local)
            ready = "every service is up"
            if url is not None:
                kubeconfig = write_kubeconfig(workdir / "kubeconfig", url)
                ready += f"; the API is {url}; export KUBECONFIG={kubeconfig}"
            report(f"ready: {ready} (Ctrl-C to stop)")
            await stopper
        else:
            report("interrupted while starting")
    except StackError as exc:
        report(f"error: {exc}")
        failed = True
    finally:
        up.cancel()
        stopper.cancel()
        for task in (up, stopper):
            with contextlib.suppress(asyncio.CancelledError, StackError):
                await task
        report("stopping")
        codes = await supervisor.down()
        status.write_text(json.dumps(supervisor.status(), indent=2) + "\n")
        unclean = {n: c for n, c in codes.items() if c not in (0, None) and n not in _one_shots(local)}
        if unclean:
            report(f"unclean exits: {json.dumps(unclean)}")
        if failed:
            for name in local.order:
                _tail(local, name)
    return 1 if failed or unclean else 0


def _one_shots(local: Plan) -> set[str]:
    return {name for name, service in local.services.items() if service.one_shot}


def _tail(local: Plan, name: str, lines: int = 15) -> None:
    path = local.services[name].log
    if not path.exists():
        return
    text = path.read_text(errors="replace").splitlines()[-lines:]
    print(f"--- {name} ({path}), last {len(text)} lines", file=sys.stderr)
    for line in text:
        print(f"    {line}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="run-local", description="Run docker-compose.yml's services as local processes, without Docker."
    )
    parser.add_argument("-f", "--file", type=Path, default=DEFAULT_FILE, help="the compose file")
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR, help="volumes, logs, kubeconfig")
    parser.add_argument("--kafka", help=f"HOST:PORT of the broker (default ${KAFKA_ENV}, else start one)")
    parser.add_argument("--prefix", default="", help="topic/group prefix added to the kafka:// URLs")
    parser.add_argument("--free-ports", action="store_true", help="publish on free host ports, not the compose ones")
    parser.add_argument("--print", action="store_true", help="print the local processes and exit")
    args = parser.parse_args(argv)
    workdir = args.workdir.resolve()
    broker = Broker(args.kafka, workdir)
    try:
        compose = load(args.file)
        if args.print:
            servers = broker.servers or "<local broker>"
            show(plan(compose, Settings(servers, workdir, args.prefix, args.free_ports), allocate=free_port))
            return 0
        # The file is checked, and published ports found free, before a broker is started for it.
        local = plan(compose, Settings("<local broker>", workdir, args.prefix, args.free_ports), allocate=free_port)
        check_published_ports(local)
        servers = broker.start()
        local = plan(compose, Settings(servers, workdir, args.prefix, args.free_ports), allocate=free_port)
        workdir.mkdir(parents=True, exist_ok=True)
        report(f"{len(local.services)} services from {compose.path} on {servers}; files in {workdir}")
        return asyncio.run(serve(compose, local, workdir))
    except (ComposeError, StackError) as exc:
        report(f"error: {exc}")
        return 2
    finally:
        broker.stop()


if __name__ == "__main__":
    sys.exit(main())
