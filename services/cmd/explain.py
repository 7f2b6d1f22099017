"""`draplane explain pod NS/NAME`: why a pod is pending now, then every recorded scheduling attempt of it.

The attempts come from the decisions log; what stands in the pod's way now
(a claim that does not exist yet, devices that ran out, a constraint no set of
devices meets) from the objects log as it is now (`services.replay.pending`).
A pod that neither exists nor has attempts is an error: ``pod NS/NAME not found``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import orjson

from services.bus import open_bus
from services.cmd.common import DEFAULT_DATA, add_bus_argument, log_to_read
from services.cmd.errors import CommandError
from services.replay.pending import Pending, explain_pending, render
from services.replay.rebuild import rebuild
from services.replay.selection import parse_time
from services.scheduler.decisions import Decision, read_decisions
from services.scheduler.explain import render_pod


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "explain",
        help="why a pod is pending (its claims and the devices they could take), and its scheduling attempts",
    )
    add_bus_argument(p)
    p.add_argument("--data", default=DEFAULT_DATA, help="data directory of the embedded log")
    p.add_argument("kind", choices=["pod", "pods", "po"], help="what to explain (pods)")
    p.add_argument("name", help="NAMESPACE/NAME, or NAME with --namespace")
    p.add_argument("--namespace", "-n", default="default", help="namespace when NAME has none (default: default)")
    p.add_argument("--since", help="only attempts at or after this time: ISO 8601, or relative such as 10m")
    p.add_argument("--all-nodes", action="store_true", help="list every rejected node, not the first ten per reason")
    p.add_argument("-o", "--output", choices=["text", "json"], default="text")
    p.set_defaults(run=run)


def pod_key(name: str, namespace: str) -> str:
    return name if "/" in name else f"{namespace}/{name}"


def run(args: argparse.Namespace) -> int:
    try:
        since = parse_time(args.since) if args.since else None
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    key = pod_key(args.name, args.namespace)
    url = log_to_read(args)
    decisions, pending = asyncio.run(_read(url, key, since))
    if pending is None and not decisions:
        raise CommandError(f"pod {key} not found")
    if args.output == "json":
        for decision in decisions:
            sys.stdout.write(orjson.dumps({"offset": decision.offset, **decision.record}).decode() + "\n")
        return 0
    if pending is None:
        lines = [f"Pod {key} does not exist (any more); what its attempts recorded:"]
    else:
        lines = render(pending)
    attempts = render_pod(key, [d.record for d in decisions], max_nodes=None if args.all_nodes else 10)
    sys.stdout.write("".join(line + "\n" for line in lines) + ("\n" if lines else "") + attempts)
    return 0


PENDING_KINDS = {
    ("", "pods"),
    ("", "nodes"),
    ("resource.k8s.io", "resourceclaims"),
    ("resource.k8s.io", "deviceclasses"),
    ("resource.k8s.io", "resourceslices"),
    ("resource.k8s.io", "devicetaintrules"),
}


async def _read(url: str, key: str, since_ms: int | None) -> tuple[list[Decision], Pending | None]:
    """The pod's recorded attempts, and why it is pending now (None: there is no such pod now)."""
    bus = open_bus(url)
    await bus.start()
    try:
        decisions = await read_decisions(bus, pod=key, since_ms=since_ms)
        state = (await rebuild(bus, kinds=PENDING_KINDS)).state
    finally:
        await bus.close()
    namespace, _, name = key.partition("/")
    return decisions, explain_pending(state, namespace, name)
