"""``draplane nodeagent``: the command line of the node agent.

Why this module exists: the flags and their defaults belong with the node
agent; ``services/cmd`` only needs ``add_parser`` to expose the subcommand::

    draplane nodeagent --node node-1 [--state-dir DIR] [--cpu 8] [--memory 32Gi]
                       [--pods 110] [--address IP] [--label K=V] [--heartbeat-interval 10]

The state directory must be the one the node's drivers use (their plugin
sockets live in ``<state-dir>/plugins``). SIGTERM and SIGINT stop it.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from services.bus import open_bus
from services.bus.port import Bus
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
from services.cmd.driver import default_state_dir
from services.nodeagent.agent import NodeAgent
from services.nodeagent.node_lease import RENEW_INTERVAL
from services.nodeagent.node_object import DEFAULT_CAPACITY
from services.runtime.logs import setup_logging
from services.runtime.snapshot import SnapshotStore


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_bus_argument(p)
    add_common_arguments(p)
    p.add_argument("--data", default=DEFAULT_DATA, help="data directory (default state dirs live under it)")
    p.add_argument("--node", default=os.environ.get("NODE_NAME", ""), help="the node's name ($NODE_NAME)")
    p.add_argument("--state-dir", type=Path, help="the node's state directory, shared with its drivers")
    p.add_argument("--cpu", default=DEFAULT_CAPACITY["cpu"], help="cpu capacity (default 8)")
    p.add_argument("--memory", default=DEFAULT_CAPACITY["memory"], help="memory capacity (default 32Gi)")
    p.add_argument("--pods", default=DEFAULT_CAPACITY["pods"], help="pod capacity (default 110)")
    p.add_argument("--address", help="the node's InternalIP (default: derived from its name)")
    p.add_argument("--label", action="append", default=[], metavar="KEY=VALUE", help="an extra node label (repeatable)")
    p.add_argument("--heartbeat-interval", type=float, default=10.0, help="seconds between heartbeats (default 10)")
    p.add_argument(
        "--node-lease-renew-interval",
        type=float,
        default=RENEW_INTERVAL,
        help="seconds between renewals of the node's Lease in kube-node-lease (default 10, kubelet's)",
    )
    p.add_argument("--workers", type=int, default=4, help="pods synced in parallel (default 4)")
    p.add_argument("--metrics-listen", default="", help="HOST:PORT to serve /metrics and /healthz on")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("nodeagent", help="a kubelet-lite: registers its Node and runs the pods bound to it")
    add_arguments(p)
    p.set_defaults(run=run)


def parse_labels(items: list[str]) -> dict[str, str]:
    labels = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"draplane nodeagent: --label {item!r}: expected KEY=VALUE")
        labels[key] = value
    return labels


def agent_from(bus: Bus, args: argparse.Namespace) -> NodeAgent:
    state_dir = args.state_dir or default_state_dir(args.data, args.node)
    return NodeAgent(
        bus,
        node=args.node,
        state_dir=state_dir,
        capacity={"cpu": args.cpu, "memory": args.memory, "pods": args.pods},
        address=args.address,
        labels=parse_labels(args.label),
        heartbeat_interval=args.heartbeat_interval,
        lease_renew_interval=args.node_lease_renew_interval,
        workers=args.workers,
        snapshot=SnapshotStore(state_dir / "nodeagent" / "view.db"),
    )


def run(args: argparse.Namespace) -> int:
    if not args.node:
        raise SystemExit("draplane nodeagent: --node is required")
    parse_labels(args.label)
    parse_gates(args)  # the flags are checked like every component's; this one reads no gate
    setup_logging("nodeagent", level=args.log_level, json=json_logs(args))
    url = args.bus or default_bus(args.data)

    async def main() -> int:
        bus = open_bus(url)
        try:
            await stopping.unless_stopped(start_bus(bus))
            agent = agent_from(bus, args)
            return await run_component("nodeagent", agent.run(), [], args.metrics_listen, agent.ready.is_set)
        finally:
            await bus.close()

    return stopping.run(main)
