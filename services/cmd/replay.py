"""`draplane replay`: print log records as kcat does, or the state at a point as `kubectl get` does.

draplane replay [--offset N | --since TIME | --from N|TIME] [--until N|TIME] [--follow] [--kind K] [-n NS]
                [--api-version GROUP/VERSION] [-o json|yaml|table]
draplane replay [--at OFFSET|TIME] [--api-version GROUP/VERSION] get RESOURCE [NAME] [-n NS | -A]
                [-o table|wide|name|yaml|json]
draplane replay --scheduler [--from N|TIME] [--until N|TIME] [-n NS] [--name POD] [--feature-gates ...]
                [--emulated-version 1.31] [--override FILE] [-o text|json]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import orjson
import yaml

from services.api.types import registry
from services.bus import open_bus
from services.bus.port import BusError
from services.cmd.common import DEFAULT_DATA, add_bus_argument, log_to_read
from services.kube.emulated_version import EmulatedVersionError, parse_emulated_version
from services.kube.feature_gates import FeatureGateError, FeatureGates
from services.replay import get_output
from services.replay.output import TABLE_HEADER, ReplayedRecord, render
from services.replay.overrides import Rewrite, rewrite_with
from services.replay.rebuild import PointError, rebuild, topic_for
from services.replay.replayer import Range, replay
from services.replay.scheduler_diff import Window
from services.replay.scheduler_replay import ReplayError, replay_scheduler
from services.replay.scheduler_report import render_json, render_text
from services.replay.selection import Filter, parse_point, parse_time, resolve_kind
from services.replay.versions import VersionView
from services.scheduler.service import SchedulerConfig
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
    start.add_argument("--from", dest="from_", metavar="OFFSET|TIME", help="start at this offset or time")
    p.add_argument("--until", help="stop after this offset or time (inclusive)")
    p.add_argument("--follow", "-f", action="store_true", help="keep reading new records")
    p.add_argument(
        "--at",
        metavar="OFFSET|TIME",
        help="with get: the point in time, an offset (resourceVersion; the state after that record) "
        "or a time (ISO 8601, or relative such as 10m: every record appended until then); default: now",
    )
    p.add_argument("--kind", help="only this kind (Pod, resourceclaims, ...)")
    p.add_argument(
        "--api-version",
        metavar="GROUP/VERSION",
        help="show the objects of that API group in that version (e.g. resource.k8s.io/v1), converted as the "
        "apiserver converts them; objects of other groups as stored",
    )
    p.add_argument("--namespace", "-n", help="only this namespace")
    p.add_argument("--name", help="only this object name")
    p.add_argument(
        "-o",
        "--output",
        choices=["json", "yaml", "table", "text"],
        default=None,
        help="record format (json); with --scheduler text (the default) or json",
    )
    p.add_argument(
        "--scheduler",
        action="store_true",
        help="re-run the scheduler over the recorded log and report the attempts it decides otherwise "
        "(--from/--until select attempts by the state they saw, an offset, or by when they began, a time)",
    )
    p.add_argument(
        "--feature-gates",
        default="",
        help="with --scheduler: the replayed scheduler's gates, kube's syntax (default: draplane's defaults)",
    )
    p.add_argument(
        "--emulated-version",
        default="",
        help="with --scheduler: the release the replayed scheduler emulates, e.g. 1.31 (default: 1.37)",
    )
    p.add_argument(
        "--percentage-of-nodes-to-score",
        type=int,
        default=None,
        help="with --scheduler: as the scheduler's flag of that name",
    )
    p.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="FILE",
        help="with --scheduler: YAML or JSON objects that replace the recorded versions of the same objects "
        "(what-if); may be repeated",
    )
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
        "--api-version", dest="get_api_version", metavar="GROUP/VERSION", help="same as replay's --api-version"
    )
    g.add_argument(
        "--show-managed-fields", action="store_true", help="keep metadata.managedFields in json and yaml output"
    )
    g.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.scheduler:
        if args.replay_command == "get":
            print("error: --scheduler does not go with get", file=sys.stderr)
            return 2
        return run_scheduler(args)
    if args.replay_command == "get":
        return run_get(args)
    if args.output == "text":
        print("error: -o text goes with --scheduler; records print as json, yaml or table", file=sys.stderr)
        return 2
    unused = [flag for flag, value in scheduler_only(args).items() if value]
    if unused:
        print(f"error: {', '.join(unused)} goes with --scheduler", file=sys.stderr)
        return 2
    if args.at:
        print("error: --at needs get: draplane replay --at OFFSET|TIME get RESOURCE [NAME]", file=sys.stderr)
        return 2
    try:
        start: tuple[str, int] | None = None
        start = start_point(args)
        until = parse_point(args.until) if args.until else None
        kind = resolve_kind(args.kind) if args.kind else None
        view = version_view(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    select = Filter(kind=kind, namespace=args.namespace, name=args.name)
    span = Range(start=start, until=until, follow=args.follow)
    url = log_to_read(args)
    return asyncio.run(_run(url, args.topic, span, select, args.output or "json", view=view))


def version_view(args: argparse.Namespace) -> VersionView | None:
    """``--api-version``: the view converting objects (None without the flag); ValueError for an unknown one."""
    text = getattr(args, "get_api_version", None) or args.api_version
    if not text:
        return None
    return VersionView.parse(text, note=lambda line: print(line, file=sys.stderr))


async def _run(url: str, topic: str, span: Range, select: Filter, fmt: str, *, view: VersionView | None = None) -> int:
    bus = open_bus(url)
    await bus.start()
    try:
        if fmt == "table":
            print(TABLE_HEADER)

        def emit(record: ReplayedRecord) -> None:
            if view is not None and fmt != "table":
                record = view.record(record)
            print(render(record, fmt), flush=span.follow)

        await replay(bus, topic=topic, span=span, select=select, emit=emit)
    except KeyboardInterrupt:
        pass
    finally:
        await bus.close()
    return 0


def start_point(args: argparse.Namespace) -> tuple[str, int] | None:
    """``--offset``, ``--since`` or ``--from`` (one at most): where reading starts; None for the beginning."""
    if args.offset is not None:
        return ("offset", args.offset)
    if args.since:
        return ("time", parse_time(args.since))
    if args.from_:
        return parse_point(args.from_)
    return None


def scheduler_only(args: argparse.Namespace) -> dict[str, object]:
    return {
        "--feature-gates": args.feature_gates,
        "--emulated-version": args.emulated_version,
        "--percentage-of-nodes-to-score": args.percentage_of_nodes_to_score is not None,
        "--override": args.override,
    }


def run_scheduler(args: argparse.Namespace) -> int:
    """``replay --scheduler``: 0 with the report (differences are findings, not failures), 1 on errors, 2 for usage."""
    unused = [
        flag
        for flag, value in {
            "--follow": args.follow,
            "--kind": args.kind,
            "--at": args.at,
            "--topic": args.topic != OBJECTS,
            "--api-version": args.api_version,
        }.items()
        if value
    ]
    if unused:
        print(f"error: {', '.join(unused)} does not go with --scheduler", file=sys.stderr)
        return 2
    if args.output not in (None, "text", "json"):
        print("error: --scheduler prints text or json", file=sys.stderr)
        return 2
    try:
        release = parse_emulated_version(args.emulated_version)
    except EmulatedVersionError as exc:
        print(f"error: {exc.flag_error(args.emulated_version)}", file=sys.stderr)
        return 2
    try:
        gates = FeatureGates.parse(args.feature_gates, release=release)
    except FeatureGateError as exc:
        print(f"error: {exc.flag_error(args.feature_gates)}", file=sys.stderr)
        return 2
    try:
        window = Window(
            start=start_point(args),
            until=parse_point(args.until) if args.until else None,
            namespace=args.namespace,
            name=args.name,
        )
        config = SchedulerConfig(gates=gates, percentage_of_nodes_to_score=args.percentage_of_nodes_to_score)
        rewrite = rewrite_with(load_objects(args.override)) if args.override else None
    except (ValueError, OSError, yaml.YAMLError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    url = log_to_read(args)
    return asyncio.run(_scheduler(url, window, config, rewrite, args.output or "text"))


def load_objects(paths: Sequence[str]) -> list[dict[str, Any]]:
    """Every object in the files: YAML or JSON documents, ``List`` kinds unpacked."""
    objects: list[dict[str, Any]] = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for doc in yaml.safe_load_all(f):
                if doc is None:
                    continue
                if not isinstance(doc, dict):
                    raise ValueError(f"{path}: not an object")
                items = doc.get("items") if str(doc.get("kind", "")).endswith("List") else None
                objects.extend(items if isinstance(items, list) else [doc])
    return objects


async def _scheduler(url: str, window: Window, config: SchedulerConfig, rewrite: Rewrite | None, fmt: str) -> int:
    bus = open_bus(url)
    try:
        await bus.start()
        report = await replay_scheduler(bus, window=window, config=config, rewrite=rewrite)
    except (ReplayError, BusError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        await bus.close()
    if fmt == "json":
        sys.stdout.write(orjson.dumps(render_json(report)).decode() + "\n")
    else:
        sys.stdout.write(render_text(report))
    return 0


def run_get(args: argparse.Namespace) -> int:
    """``replay --at … get``: 0 when printed, 1 when the named object did not exist then, 2 for bad arguments."""
    given = {
        "--follow": args.follow,
        "--offset": args.offset is not None,
        "--since": args.since,
        "--from": args.from_,
        "--until": args.until,
        **scheduler_only(args),
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
        view = version_view(args)
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
            log_to_read(args),
            rt,
            at,
            namespace,
            args.object_name,
            args.get_output,
            managed_fields=args.show_managed_fields,
            view=view,
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
    view: VersionView | None = None,
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
    if view is not None and fmt in ("json", "yaml"):  # tables and names read the stored form
        objects = [view.convert(obj, group=rt.group) for obj in objects]
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
