"""A small ``v1.NodeSelector`` matcher of its own, for the binding check.

Why this module exists: the check "a pod is bound only to a node its claims
allow" must not share its matching code with the scheduler it checks. This is
Kubernetes' semantics in a few lines: terms are ORed, the requirements of a
term ANDed, an empty term matches nothing; ``matchFields`` knows only
``metadata.name``; a malformed requirement matches nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def node_selector_matches(selector: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """Whether ``node`` (a Node object) satisfies ``selector`` (a ``v1.NodeSelector``)."""
    meta = node.get("metadata") or {}
    labels: Mapping[str, str] = meta.get("labels") or {}
    fields = {"metadata.name": str(meta.get("name", ""))}
    for term in selector.get("nodeSelectorTerms") or ():
        expressions = term.get("matchExpressions") or ()
        match_fields = term.get("matchFields") or ()
        if not expressions and not match_fields:
            continue
        if all(_requirement(r, labels) for r in expressions) and all(_requirement(r, fields) for r in match_fields):
            return True
    return False


def _requirement(req: Mapping[str, Any], values: Mapping[str, str]) -> bool:
    key, operator = req.get("key"), req.get("operator")
    wanted = [str(v) for v in req.get("values") or ()]
    present = key in values
    value = values.get(str(key), "")
    if operator == "In":
        return present and value in wanted
    if operator == "NotIn":
        return not present or value not in wanted
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and len(wanted) == 1:
        try:
            have, bound = int(value), int(wanted[0])
        except ValueError:
            return False
        return have > bound if operator == "Gt" else have < bound
    return False
