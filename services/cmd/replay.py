"""`draplane replay`: print log records as kcat does, from a start point to an end point."""

from __future__ import annotations

import argparse
import asyncio
import sys

from services.bus import open_bus
from services.cmd.common import DEFAULT_DATA, add_bus_argument, default_bus
from services.replay.output import TABLE_HEADER, ReplayedRecord, render
from services.replay.replayer import Range, replay
from services.replay.selection import Filter, parse_point, parse_time, resolve_kind
from topics.declarations import OBJECTS


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("replay", help="print log records (offset, time, key, type, object)")
    add_bus_argument(p)
    p.add_argument("--data", default=DEFAULT_DATA, help="data directory of the embedded log")
    p.add_argument("--topic", default=OBJECTS, help="topic to read (default: objects)")
    start = p.add_mutually_exclusive_group()
    start.add_argument("--from-beginning", action="store_true", help="start at the first record (the default)")
    start.add_argument("--offset", type=int, help="start at this offset")
    start.add_argument("--since", help="start at this time: ISO 8601, or relative such as 10m")
    p.add_argument("--until", help="stop after this offset or time (inclusive)")
    p.add_argument("--follow", "-f", action="store_true", help="keep reading new records")
    p.add_argument("--kind", help="only this kind (Pod, resourceclaims, ...)")
    p.add_argument("--namespace", "-n", help="only this namespace")
    p.add_argument("--name", help="only this object name")
    p.add_argument("-o", "--output", choices=["json", "yaml", "table"], default="json")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        start: tuple[str, int] | None = None
        if args.offset is not None:
            start = ("offset", args.offset)
        elif args.since:
            start = ("time", parse_time(args.since))
        until = parse_point(args.until) if args.until else None
        kind = resolve_kind(args.kind) if args.kind else None
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    select = Filter(kind=kind, namespace=args.namespace, name=args.name)
    span = Range(start=start, until=until, follow=args.follow)
    return asyncio.run(_run(args.bus or default_bus(args.data), args.topic, span, select, args.output))


async def _run(url: str, topic: str, span: Range, select: Filter, fmt: str) -> int:
    bus = open_bus(url)
    await bus.start()
    try:
        if fmt == "table":
            print(TABLE_HEADER)

        def emit(record: ReplayedRecord) -> None:
            print(render(record, fmt), flush=span.follow)

        await replay(bus, topic=topic, span=span, select=select, emit=emit)
    except KeyboardInterrupt:
        pass
    finally:
        await bus.close()
    return 0
