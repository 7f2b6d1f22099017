"""`draplane replay`: print log records as kcat does, or the state at a point as `kubectl get` does.

draplane replay [--offset N | --since TIME] [--until N|TIME] [--follow] [--kind K] [-n NS] [-o json|yaml|table]
draplane replay [--at OFFSET|TIME] get RESOURCE [NAME] [-n NS | -A] [-o table|wide|name|yaml|json]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import UTC, datetime

from services.api import registry
from services.bus import open_bus
from services.cmd.common import DEFAULT_DATA, add_bus_argument, default_bus
from services.replay import get_output
from services.replay.output import TABLE_HEADER, ReplayedRecord, render
from services.replay.rebuild import PointError, rebuild, topic_for
from services.replay.replayer import Range, replay
from services.replay.selection import Filter, parse_point, parse_time, resolve_kind
from topics.declarations import OBJECTS


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "replay",
        help="print log records (offset, time, key, type, object), or `get` the state at a point",
        description="Print log records from a start point to an end point; or, with `get`, "
        "rebuild the objects as they were at --at OFFSET|TIME and print them as kubectl get does.",
    )
    add_bus_argument(p)
    p.add_argument("--data", default=DEFAULT_DATA, help="data directory of the embedded log")
    p.add_argument("--topic", default=OBJECTS, help="topic to read (default: objects)")
    start = p.add_mutually_exclusive_group()
    start.add_argument("--from-beginning", action="store_true", help="start at the first record (the default)")
    start.add_argument("--offset", type=int, help="start at this offset")
    start.add_argument("--since", help="start at this time: ISO 8601, or relative such as 10m")
    p.add_argument("--until", help="stop after this offset or time (inclusive)")
    p.add_argument("--follow", "-f", action="store_true", help="keep reading new records")
    p.add_argument(
        "--at",
        metavar="OFFSET|TIME",
        help="with get: the point in time, an offset (resourceVersion; the state after that record) "
        "or a time (ISO 8601, or relative such as 10m: every record appended until then); default: now",
    )
    p.add_argument("--kind", help="only this kind (Pod, resourceclaims, ...)")
    p.add_argument("--namespace", "-n", help="only this namespace")
    p.add_argument("--name", help="only this object name")
    p.add_argument("-o", "--output", choices=["json", "yaml", "table"], default=None, help="record format (json)")
    p.set_defaults(run=run)
    commands = p.add_subparsers(dest="replay_command", metavar="get")
    g = commands.add_parser(
        "get",
        help="print objects as they were at --at, as kubectl get does",
        description="Rebuild the objects as they were at --at OFFSET|TIME (default: now) and print them "
        "with Kubernetes' columns.",
    )
    g.add_argument(
        "resource",
        metavar="RESOURCE",
        help="resource type: pods, po, resourceclaims, ResourceSlice, deviceclasses, ...",
    )
    g.add_argument("object_name", nargs="?", metavar="NAME", help="one object")
    g.add_argument("-n", "--namespace", dest="get_namespace", metavar="NAMESPACE", help="namespace (default: default)")
    g.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")
    g.add_argument("-o", "--output", dest="get_output", choices=get_output.FORMATS, default="table")
    g.add_argument("--at", dest="get_at", metavar="OFFSET|TIME", help="same as replay's --at")
    g.add_argument(
        "--show-managed-fields", action="store_true", help="keep metadata.managedFields in json and yaml output"
    )
    g.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.replay_command == "get":
        return run_get(args)
    if args.at:
        print("error: --at needs get: draplane replay --at OFFSET|TIME get RESOURCE [NAME]", file=sys.stderr)
        return 2
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
    return asyncio.run(_run(args.bus or default_bus(args.data), args.topic, span, select, args.output or "json"))


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


def run_get(args: argparse.Namespace) -> int:
    """``replay --at … get``: 0 when printed, 1 when the named object did not exist then, 2 for bad arguments."""
    given = {
        "--follow": args.follow,
        "--offset": args.offset is not None,
        "--since": args.since,
        "--until": args.until,
        "--kind": args.kind,
        "--name": args.name,
    }
    unused = [flag for flag, value in given.items() if value]
    if unused or args.topic != OBJECTS:
        print(f"error: {', '.join(unused) or '--topic'} does not go with get (use --at)", file=sys.stderr)
        return 2
    text = args.get_at or args.at
    try:
        at = parse_point(text) if text else None
        group, plural = resolve_kind(args.resource)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rt = registry.by_resource(group, plural)
    assert rt is not None
    namespace: str | None = None
    if rt.namespaced and not args.all_namespaces:
        namespace = args.get_namespace or args.namespace or "default"
    return asyncio.run(
        _get(
            args.bus or default_bus(args.data),
            rt,
            at,
            namespace,
            args.object_name,
            args.get_output,
            managed_fields=args.show_managed_fields,
        )
    )


async def _get(
    url: str,
    rt: registry.ResourceType,
    at: tuple[str, int] | None,
    namespace: str | None,
    name: str | None,
    fmt: str,
    *,
    managed_fields: bool = False,
) -> int:
    bus = open_bus(url)
    await bus.start()
    try:
        kind = (rt.group, rt.plural)
        rebuilt = await rebuild(bus, at=at, kinds={kind}, topic=topic_for(kind))
    except PointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        await bus.close()
    if rebuilt.inexact:
        when = datetime.fromtimestamp(rebuilt.as_of_ms / 1000, UTC).isoformat()
        print(
            f"warning: {when} is older than the compaction lag of {rebuilt.topic}: objects changed since "
            "may be missing or show a later state",
            file=sys.stderr,
        )
    if rebuilt.past_end:
        print(f"note: {at[1] if at else ''} is past the end of the log: this is the latest state", file=sys.stderr)
    state = rebuilt.state
    if name is not None:
        obj = state.get(rt.group, rt.plural, namespace or "", name)
        if obj is None:
            print(get_output.not_found(rt, name), file=sys.stderr)
            return 1
        objects = [obj]
    else:
        objects = state.list(rt.group, rt.plural, namespace)
        if not objects and fmt in ("table", "wide"):
            print(get_output.nothing_found(rt, namespace), file=sys.stderr)
            return 0
    if not managed_fields:
        objects = [get_output.without_managed_fields(obj) for obj in objects]
    sys.stdout.write(
        get_output.render(
            rt,
            objects,
            fmt=fmt,
            now=rebuilt.as_of_ms / 1000,
            single=name is not None,
            namespace_column=rt.namespaced and namespace is None,
            resource_version=rebuilt.resource_version,
        )
    )
    return 0
