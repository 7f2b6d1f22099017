"""`draplane controller-manager`: the resourceclaim controller, the garbage collector and the namespace controller."""

from __future__ import annotations

import argparse
import socket
from pathlib import Path

from services.bus import open_bus
from services.cmd import stopping
from services.cmd.common import (
    DEFAULT_DATA,
    add_bus_argument,
    add_common_arguments,
    default_bus,
    json_logs,
    parse_gates,
    start_bus,
)
from services.cmd.component import run_component
from services.cmd.leader_election_flags import add_leader_election_arguments, leader_election_from
from services.controllers.manager import DEFAULT_CLAIM_WORKERS, ControllerManager
from services.kube.leader_election import CONTROLLER_MANAGER_LEASE
from services.runtime.logs import setup_logging
from services.runtime.snapshot import SnapshotStore


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("controller-manager", help="run the resourceclaim, garbage-collector and namespace controllers")
    add_bus_argument(p)
    add_common_arguments(p)
    p.add_argument("--data", default=DEFAULT_DATA, help="directory for the informer snapshot")
    p.add_argument("--metrics-listen", default="", help="HOST:PORT to serve /metrics and /healthz on")
    p.add_argument(
        "--workers",
        type=int,
        default=DEFAULT_CLAIM_WORKERS,
        help=f"resourceclaim controller workers (default {DEFAULT_CLAIM_WORKERS})",
    )
    add_leader_election_arguments(p, resource_name=CONTROLLER_MANAGER_LEASE)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    setup_logging("controller-manager", level=args.log_level, json=json_logs(args))
    gates = parse_gates(args)
    election = leader_election_from(args)
    url = args.bus or default_bus(args.data)

    async def main() -> int:
        bus = open_bus(url)
        try:
            await stopping.unless_stopped(start_bus(bus))
            manager = ControllerManager(
                bus,
                gates=gates,
                claim_workers=args.workers,
                host=socket.gethostname(),
                leader_election=election,
                snapshot=SnapshotStore(Path(args.data) / "controller-manager" / "view.db"),
            )
            return await run_component(
                "controller-manager", manager.run(), [manager.registry], args.metrics_listen, manager.ready.is_set
            )
        finally:
            await bus.close()

    return stopping.run(main)
