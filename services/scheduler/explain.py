"""Rendering a pod's decision records for a person (``draplane explain pod NS/NAME``).

Pure: records in, text out. For every attempt it shows when it started, how
it ended, the FailedScheduling message, which plugin rejected which nodes and
why, the node chosen with its score, the devices allocated per claim and
whether binding succeeded. Nodes rejected for the same reason by the same
plugin are listed on one line, so a 500-node cluster stays readable; the list
of names is shortened after ``max_nodes`` unless the caller asks for all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from services.scheduler import rejections
from services.scheduler.dra.binding_conditions import failure_reason

RESULT_WORDS = {
    "scheduled": "Scheduled",
    "unschedulable": "Unschedulable",
    "error": "Error",
    "skipped": "Skipped (pod is being deleted)",
}


def _nodes(names: Sequence[str], max_nodes: int | None) -> str:
    if max_nodes is None or len(names) <= max_nodes:
        return ", ".join(names)
    return ", ".join(names[:max_nodes]) + f", … and {len(names) - max_nodes} more"


def _device_lines(allocation: Mapping[str, Any]) -> list[str]:
    results = ((allocation.get("devices") or {}).get("results")) or ()
    lines = []
    for result in results:
        device = f"{result.get('driver', '')}/{result.get('pool', '')}/{result.get('device', '')}"
        extra = " (admin access)" if result.get("adminAccess") else ""
        request, slash, sub = str(result.get("request", "")).partition("/")
        if slash:
            extra += f" (subrequest chosen: {sub} of {request})"
        lines.append(f"request {result.get('request', '')}: {device}{extra}")
    return lines


def render_attempt(record: Mapping[str, Any], *, max_nodes: int | None = 10) -> list[str]:
    result = str(record.get("result", ""))
    binding = record.get("binding") or {}
    headline = RESULT_WORDS.get(result, result or "?")
    node = record.get("node") or binding.get("node")
    if node:
        headline += f" → {node}"
    if binding:
        headline += " (bound)" if binding.get("result") == "bound" else " (binding failed)"
    lines = [f"Attempt {record.get('attempt', '?')}  {record.get('time', '')}  {headline}"]
    message = record.get("message")
    if message:
        lines.append(f"  message: {message}")
    grouped = rejections.groups(record)
    if grouped:
        lines.append(f"  rejected on {sum(len(nodes) for *_, nodes in grouped)} node(s):")
        for plugin, code, reasons, nodes in grouped:
            lines.append(f"    {plugin} ({code}): {reasons}")
            lines.append(f"      {len(nodes)} node(s): {_nodes(nodes, max_nodes)}")
    pending = record.get("pendingPlugins") or ()
    if pending:
        lines.append(f"  waiting for: {', '.join(pending)}")
    if result == "scheduled" or binding:
        evaluated = record.get("evaluatedNodes")
        feasible = record.get("feasibleNodes")
        if evaluated is not None and feasible is not None:
            lines.append(f"  nodes: {evaluated} evaluated, {feasible} feasible")
        scores = record.get("scores") or {}
        if scores and node in scores:
            ranked = sorted(scores.items(), key=lambda item: (-int(item[1]), item[0]))
            best = ", ".join(f"{name}={score}" for name, score in ranked[:3])
            lines.append(f"  score of {node}: {scores[node]} (best: {best})")
    dra = (record.get("plugins") or {}).get("DynamicResources") or {}
    allocations = dra.get("allocations") or {}
    if allocations:
        lines.append("  allocation:")
        for claim, allocation in sorted(allocations.items()):
            lines.append(f"    claim {claim}:")
            for device_line in _device_lines(allocation):
                lines.append(f"      {device_line}")
    if binding and binding.get("result") != "bound" and binding.get("message") and not message:
        lines.append(f"  binding: {binding['message']}")
    if binding and binding.get("result") != "bound":
        reason = failure_reason(str(binding.get("message") or message or ""))
        if reason is not None:
            lines.append(f"  {reason}")
    return lines


def render_pod(pod: str, records: Sequence[Mapping[str, Any]], *, max_nodes: int | None = 10) -> str:
    """Every attempt of one pod, oldest first; says so when there is none."""
    if not records:
        return f"No scheduling attempts recorded for pod {pod}.\n"
    uids = sorted({str(r.get("uid", "")) for r in records if r.get("uid")})
    header = f"Pod {pod}: {len(records)} attempt(s)"
    if len(uids) > 1:
        header += f" over {len(uids)} pods of that name (uids {', '.join(uids)})"
    out = [header]
    last_uid = None
    for record in records:
        uid = record.get("uid")
        if len(uids) > 1 and uid != last_uid:
            out.append(f"uid {uid}:")
            last_uid = uid
        out.append("")
        out.extend(render_attempt(record, max_nodes=max_nodes))
    return "\n".join(out) + "\n"
