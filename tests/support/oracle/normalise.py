"""What may legitimately differ between two API servers, taken out of captured outputs before they are compared.

Why this module exists: kube-apiserver and draplane answer the same request
with different uids, timestamps, resourceVersions, generated name suffixes,
ports and table ages. Those say nothing about compatibility; everything else
does. Pure functions over the JSON-like captures, so the rules are
unit-tested (tests/unit/test_oracle_compare.py).

Rules:

- a string that is a UUID becomes ``<uid>``; an RFC 3339 time ``<time>``;
- ``resourceVersion`` values (and a watch event's object's) become ``<rv>``,
  and so do the two a "too old resource version: 5 (90)" message quotes;
  a list's ``continue`` token ``<continue>``; a value the scenario captured
  into a variable becomes ``<$NAME>`` wherever it appears;
- a name made from ``generateName`` keeps its prefix and loses the suffix;
- the server's own address (``127.0.0.1:PORT``, its URL) becomes ``<server>``;
- in a ``Table``, the cells of the ``Age`` column become ``<age>``; in kubectl's
  text, ages (``0s``, ``5m3s``, ``<invalid>``) become ``<age>`` and runs of
  spaces one space (column widths follow the values);
- ``managedFields`` is sorted by operation, manager, apiVersion and
  subresource: kube-apiserver orders it by operation, then the *second* of
  each entry's time, then those keys
  (k8s.io/apiserver/pkg/util/managedfields/internal/managedfields.go,
  ``sortEncodedManagedFields``), so two updates a second apart swap places
  by timing alone;
- no other list is reordered: every list a scenario captures has an order
  Kubernetes defines (by name, by event), so order is compared.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

UID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})")
# kubectl's human durations (k8s.io/apimachinery/pkg/util/duration.HumanDuration) as a whole column value.
AGE = re.compile(r"(?<!\S)(?:\d+[smhdy])+(?!\S)|<invalid>")
SPACES = re.compile(r"[ \t]{2,}")
_RV_KEYS = frozenset({"resourceVersion"})
# The resourceVersions a 410's message quotes (k8s.io/apiserver/pkg/storage/errors.go, NewTooLargeResourceVersionError
# and etcd3's "too old resource version: %d (%d)").
RV_MESSAGE = re.compile(r"(too old resource version|Too large resource version): \d+ \(\d+\)")


@dataclass(frozen=True)
class Context:
    """What one target's run knows that the rules need."""

    server: str = ""  # the URL kubectl and HTTP used, e.g. https://127.0.0.1:34567
    variables: Mapping[str, str] = field(default_factory=dict)  # values captured by the scenario

    def addresses(self) -> list[str]:
        if not self.server:
            return []
        hostport = self.server.split("://", 1)[-1].rstrip("/")
        return [self.server.rstrip("/"), hostport]


def text(value: str, ctx: Context) -> str:
    """One string: addresses, captured values, uids and times replaced."""
    for address in ctx.addresses():
        value = value.replace(address, "<server>")
    for name, captured in sorted(ctx.variables.items(), key=lambda kv: -len(kv[1])):
        if not captured:
            continue
        if value == captured:
            return f"<${name}>"
        value = re.sub(rf"(?<![\w-]){re.escape(captured)}(?![\w-])", f"<${name}>", value)
    value = RV_MESSAGE.sub(r"\1: <rv> (<rv>)", value)
    value = UID.sub("<uid>", value)
    return TIME.sub("<time>", value)


def kubectl_text(output: str, ctx: Context) -> list[str]:
    """kubectl's printed output as lines: `text` plus ages and column padding."""
    lines = []
    for line in output.splitlines():
        line = text(line, ctx)
        line = AGE.sub("<age>", line)
        lines.append(SPACES.sub(" ", line).rstrip())
    return lines


def _generated(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    prefix, name = meta.get("generateName"), meta.get("name")
    if isinstance(prefix, str) and isinstance(name, str) and prefix and name.startswith(prefix):
        return {**meta, "name": prefix + "<suffix>"}
    return meta


def _managed_fields_order(entry: Any) -> tuple[str, ...]:
    if not isinstance(entry, dict):
        return ("",)
    return tuple(str(entry.get(k, "")) for k in ("operation", "manager", "apiVersion", "subresource"))


def _table(doc: dict[str, Any]) -> dict[str, Any]:
    columns = doc.get("columnDefinitions") or []
    ages = [i for i, c in enumerate(columns) if isinstance(c, dict) and c.get("name") == "Age"]
    if not ages or not isinstance(doc.get("rows"), list):
        return doc
    rows = []
    for row in doc["rows"]:
        if isinstance(row, dict) and isinstance(row.get("cells"), list):
            cells = list(row["cells"])
            for i in ages:
                if i < len(cells):
                    cells[i] = "<age>"
            row = {**row, "cells": cells}
        rows.append(row)
    return {**doc, "rows": rows}


def value(doc: Any, ctx: Context) -> Any:
    """A parsed JSON/YAML document with every rule applied, recursively."""
    if isinstance(doc, str):
        return text(doc, ctx)
    if isinstance(doc, list):
        return [value(v, ctx) for v in doc]
    if not isinstance(doc, dict):
        return doc
    if doc.get("kind") == "Table":
        doc = _table(doc)
    out: dict[str, Any] = {}
    for key, v in doc.items():
        if key in _RV_KEYS and isinstance(v, str) and v:
            captured = text(v, ctx)
            out[key] = captured if captured.startswith("<$") else "<rv>"
        elif key == "continue" and isinstance(v, str) and v:
            out[key] = "<continue>"
        elif key == "metadata" and isinstance(v, dict):
            out[key] = value(dict(_generated(v)), ctx)
        elif key == "managedFields" and isinstance(v, list):
            out[key] = sorted(value(v, ctx), key=_managed_fields_order)
        else:
            out[key] = value(v, ctx)
    return out
