"""`draplane topics`: create the declared topics, verify the ones that exist (compose's topic-init).

Every component already runs create-or-verify when it starts; this one-shot
does it first and alone, so that a deployment fails at one clearly named step
— with every difference listed — instead of in whichever component happened to
start first. It exits 0 when the log holds the topics as declared, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from services.bus import open_bus
from services.bus.port import BusError, TopicMismatch, TopicSpec
from services.cmd.common import DEFAULT_DATA, add_bus_argument, default_bus
from topics.declarations import declarations


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("topics", help="create missing topics and verify existing ones against their declarations")
    add_bus_argument(p)
    p.add_argument("--data", default=DEFAULT_DATA, help="data directory of the embedded log (for the default --bus)")
    p.set_defaults(run=run)


def describe(spec: TopicSpec) -> str:
    settings = ", ".join(f"{key}={value}" for key, value in sorted(spec.config.items()))
    return f"topic {spec.name}: {spec.partitions} partition(s), {settings}"


def run(args: argparse.Namespace) -> int:
    url = args.bus or default_bus(args.data)
    specs = declarations()
    try:
        asyncio.run(_ensure(url, specs))
    except TopicMismatch as exc:
        print("draplane topics: existing topics differ from their declarations:", file=sys.stderr)
        for difference in str(exc).split("; "):
            print(f"  {difference}", file=sys.stderr)
        return 1
    except (BusError, ValueError) as exc:
        print(f"draplane topics: {exc}", file=sys.stderr)
        return 1
    for spec in specs:
        print(f"{describe(spec)}: ok", flush=True)
    return 0


async def _ensure(url: str, specs: list[TopicSpec]) -> None:
    bus = open_bus(url)
    await bus.start()
    try:
        await bus.ensure_topics(specs)
    finally:
        await bus.close()
