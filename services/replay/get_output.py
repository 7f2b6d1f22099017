"""Printing a point-in-time state as ``kubectl get`` prints: tables, names, YAML and JSON.

Pure. The columns and cells are the apiserver's server-side printers
(`services.apiserver.tables`, Kubernetes 1.31's), so a replayed table reads
exactly like ``kubectl get`` did at the time; the layout is kubectl's: upper
case headers, Go's tabwriter with a minimum cell width of 6 and a padding of
3, the wide (priority 1) columns only with ``-o wide``, a NAMESPACE column
first with ``--all-namespaces``. Ages are measured from the point in time,
not from now. ``-o json|yaml`` print one object for a name, else a ``List``
whose resourceVersion is the offset the state is consistent at.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import yaml

from services.api.types.registry import ResourceType
from services.apiserver import tables
from services.apiserver.table_cells import Cell

FORMATS = ("table", "wide", "name", "json", "yaml")
MIN_WIDTH = 6  # kubectl's tabwriter: minimum cell width, padding included
PADDING = 3


def cell_text(value: Cell) -> str:
    """A cell as kubectl prints it (Go's ``%v``; nil as ``<none>``)."""
    if value is None:
        return "<none>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def tabwrite(lines: Sequence[Sequence[str]]) -> str:
    """Go's ``tabwriter.NewWriter(out, 6, 4, 3, ' ', 0)`` over tab-separated cells; the last cell is not padded."""
    columns = max((len(line) for line in lines), default=0)
    widths = [0] * columns
    for line in lines:
        for i, cell in enumerate(line[:-1]):
            widths[i] = max(widths[i], len(cell) + PADDING, MIN_WIDTH)
    out = []
    for line in lines:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(line[:-1])]
        if line:
            cells.append(line[-1])
        out.append("".join(cells))
    return "\n".join(out) + "\n" if out else ""


def table(
    rt: ResourceType,
    objects: Sequence[dict[str, Any]],
    *,
    now: float,
    wide: bool = False,
    namespace_column: bool = False,
) -> str:
    """``kubectl get`` (or ``-o wide``) of ``objects``; ``now`` is when the ages are measured (epoch seconds)."""
    columns, print_row = tables.printer(rt)
    shown = [i for i, col in enumerate(columns) if wide or col.get("priority", 0) == 0]
    header = [str(columns[i]["name"]).upper() for i in shown]
    if namespace_column:
        header.insert(0, "NAMESPACE")
    lines = [header]
    for obj in objects:
        cells = print_row(obj, now)
        line = [cell_text(cells[i]) for i in shown]
        if namespace_column:
            line.insert(0, str((obj.get("metadata") or {}).get("namespace", "")))
        lines.append(line)
    return tabwrite(lines)


def without_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """kubectl hides ``metadata.managedFields`` unless ``--show-managed-fields``."""
    meta = obj.get("metadata") or {}
    if "managedFields" not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def name_line(rt: ResourceType, obj: dict[str, Any]) -> str:
    """``-o name``: ``pod/web-0``, ``resourceclaim.resource.k8s.io/gpu``."""
    kind = rt.kind.lower() if not rt.group else f"{rt.kind.lower()}.{rt.group}"
    return f"{kind}/{(obj.get('metadata') or {}).get('name', '')}"


def as_list(objects: Sequence[dict[str, Any]], resource_version: str) -> dict[str, Any]:
    """What ``kubectl get -o json`` prints for several objects."""
    return {
        "apiVersion": "v1",
        "items": list(objects),
        "kind": "List",
        "metadata": {"resourceVersion": resource_version},
    }


def render(
    rt: ResourceType,
    objects: Sequence[dict[str, Any]],
    *,
    fmt: str,
    now: float,
    single: bool = False,
    namespace_column: bool = False,
    resource_version: str = "",
) -> str:
    """The whole output of one ``get`` in ``fmt`` (see `FORMATS`); ``single``: a name was asked for."""
    if fmt in ("table", "wide"):
        return table(rt, objects, now=now, wide=fmt == "wide", namespace_column=namespace_column)
    if fmt == "name":
        return "".join(name_line(rt, obj) + "\n" for obj in objects)
    doc: Any = objects[0] if single and objects else as_list(objects, resource_version)
    if fmt == "json":  # kubectl: Go's json.MarshalIndent with four spaces; maps come out sorted
        return json.dumps(doc, indent=4, sort_keys=True, ensure_ascii=False) + "\n"
    if fmt == "yaml":
        return yaml.safe_dump(doc, sort_keys=True, default_flow_style=False, allow_unicode=True)
    raise ValueError(f"unknown output format {fmt!r}: use one of {', '.join(FORMATS)}")


def not_found(rt: ResourceType, name: str) -> str:
    """kubectl's message for a name that does not exist."""
    return f'Error from server (NotFound): {rt.group_resource} "{name}" not found'


def nothing_found(rt: ResourceType, namespace: str | None) -> str:
    """kubectl's message for an empty list (on stderr)."""
    if rt.namespaced and namespace is not None:
        return f"No resources found in {namespace} namespace."
    return "No resources found"
