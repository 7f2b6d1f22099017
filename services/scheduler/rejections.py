"""The nodes a scheduling attempt rejected, as decision records carry them.

Why grouped: on a cluster of hundreds of nodes most rejections share one
verdict ("cannot allocate all claims" on every full node). One entry per node
made a record of a 500-node cluster ~60 KB and would pass Kafka's 1 MB record
limit at ~5,000 nodes; listing the nodes under each distinct verdict costs a
node's name per node. A record carries

    "rejected": [{"plugin": P, "code": C, "reasons": [...], "nodes": [...]}, ...]

largest group first, nodes sorted. A group of numbered nodes names them with
a range expression instead (`node_ranges`): ``"nodes": []`` and
``"nodeRanges": ["node-[0000-0497,0499]"]``; a reader that does not know the
key sees a group without nodes rather than a wrong name. Records written
before had ``"rejections": {node: {"plugin", "code", "reasons"}}``; the
readers here accept all forms, so ``explain`` and ``replay --scheduler`` work
on old logs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

from services.scheduler import node_ranges
from services.scheduler.status import Status

log = logging.getLogger(__name__)

KEY = "rejected"
LEGACY_KEY = "rejections"
RANGES = "nodeRanges"

Group = tuple[str, str, tuple[str, ...]]  # plugin, code, reasons


def encode(statuses: Mapping[str, Status]) -> list[dict[str, Any]]:
    """The record form of node -> status (the diagnosis of a cycle)."""
    values = list(statuses.values())
    if values and values.count(values[0]) == len(values):  # one verdict for every node, as is common
        status = values[0]
        return [_group(status.plugin, str(status.code), status.reasons, sorted(statuses))]
    by_status: dict[int, tuple[Status, list[str]]] = {}
    for node, status in statuses.items():
        entry = by_status.get(id(status))
        if entry is None:
            by_status[id(status)] = (status, [node])
        else:
            entry[1].append(node)
    merged: dict[Group, list[str]] = {}
    for status, nodes in by_status.values():  # equal verdicts from distinct Status objects
        merged.setdefault((status.plugin, str(status.code), status.reasons), []).extend(nodes)
    return [
        _group(plugin, code, reasons, sorted(nodes))
        for (plugin, code, reasons), nodes in sorted(merged.items(), key=lambda item: (-len(item[1]), item[0]))
    ]


def _group(plugin: str, code: str, reasons: tuple[str, ...], nodes: list[str]) -> dict[str, Any]:
    group: dict[str, Any] = {"plugin": plugin, "code": code, "reasons": list(reasons)}
    expression = node_ranges.compact(nodes)
    if expression is None:
        group["nodes"] = nodes
    else:
        group["nodes"] = []
        group[RANGES] = [expression]
    return group


def _nodes(group: Mapping[str, Any]) -> Iterator[str]:
    yield from (str(node) for node in group.get("nodes") or ())
    for expression in group.get(RANGES) or ():
        try:
            yield from node_ranges.expand(str(expression))
        except node_ranges.BadExpression as exc:
            log.warning("decision record: %s; those nodes are left out", exc)


def groups(record: Mapping[str, Any]) -> list[tuple[str, str, str, list[str]]]:
    """(plugin, code, reasons as text, nodes) per distinct verdict, largest group first."""
    merged: dict[tuple[str, str, str], list[str]] = {}
    for node, rejection in by_node(record).items():
        plugin = str(rejection.get("plugin") or "-")
        code = str(rejection.get("code") or "")
        reasons = ", ".join(str(r) for r in rejection.get("reasons") or ()) or "(no reason given)"
        merged.setdefault((plugin, code, reasons), []).append(node)
    ordered = sorted(merged.items(), key=lambda item: (-len(item[1]), item[0]))
    return [(plugin, code, reasons, sorted(nodes)) for (plugin, code, reasons), nodes in ordered]


def by_node(record: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Node -> {plugin, code, reasons}, from either form; empty when the record lists none."""
    grouped = record.get(KEY)
    if isinstance(grouped, list):
        out: dict[str, dict[str, Any]] = {}
        for group in grouped:
            if not isinstance(group, Mapping):
                continue
            rejection = {key: group.get(key) for key in ("plugin", "code", "reasons")}
            for node in _nodes(group):
                out[node] = rejection
        return out
    legacy = record.get(LEGACY_KEY)
    if isinstance(legacy, Mapping):
        return {str(node): dict(r) if isinstance(r, Mapping) else {} for node, r in legacy.items()}
    return {}


def listed(record: Mapping[str, Any]) -> bool:
    """Whether the record says which nodes were rejected (even none); old scheduled records did not."""
    return KEY in record or LEGACY_KEY in record
