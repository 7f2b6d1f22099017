"""LIST of a collection, with label/field selectors and paging.

``labelSelector`` and ``fieldSelector`` are parsed here (Kubernetes' syntax and
error messages, `services.api.machinery.selectors`) and handed to the backend as one
predicate; ``limit``/``continue`` page through a consistent snapshot whose
offset is the list's ``resourceVersion``. In JSON and protobuf the body is
assembled from each item's kept encoding (`Scope.encoded`): a list re-encodes
only the object versions no list, get or watch has sent yet.
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from services.api.machinery.selectors import SelectorError, object_filter
from services.api.machinery.status import bad_request
from services.apiserver import tables
from services.apiserver.backend import ObjectFilter
from services.apiserver.encoded_objects import Encoded
from services.apiserver.http.errors import invalid_options
from services.apiserver.http.negotiation import protobuf_codec
from services.apiserver.http.scope import Scope

_RV_MATCH = ("", "Exact", "NotOlderThan")


def selector_filter(scope: Scope, *, name: str | None = None) -> ObjectFilter | None:
    """The request's selectors as one predicate (400 with Kubernetes' message when bad)."""
    label = scope.query.get("labelSelector", "")
    field = scope.query.get("fieldSelector", "")
    if name is not None:
        term = "metadata.name=" + name.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
        field = f"{field},{term}" if field else term
    try:
        return object_filter(scope.route.rt, label_selector=label, field_selector=field)
    except SelectorError as exc:
        raise bad_request(str(exc)) from None


def check_resource_version_match(scope: Scope, kind: str = "ListOptions") -> str:
    match = scope.query.get("resourceVersionMatch", "")
    if match not in _RV_MATCH:
        raise invalid_options(
            kind,
            [f'resourceVersionMatch: Unsupported value: "{match}": supported values: "Exact", "NotOlderThan"'],
        )
    if match and not scope.query.get("resourceVersion"):
        raise invalid_options(
            kind,
            ["resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"],
        )
    return match


async def list_(scope: Scope) -> web.Response:
    rt = scope.route.rt
    match = selector_filter(scope)
    check_resource_version_match(scope)
    if scope.bool_param("sendInitialEvents"):
        raise invalid_options("ListOptions", ["sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"])
    limit = scope.int_param("limit")
    if limit is not None and limit <= 0:
        limit = None
    result = await scope.backend.list(
        scope.stored_rt,
        scope.route.namespace,
        match=match,
        limit=limit,
        continue_token=scope.query.get("continue") or None,
        resource_version=scope.query.get("resourceVersion") or None,
    )
    meta: dict[str, Any] = {"resourceVersion": result.resource_version}
    if result.continue_token:
        meta["continue"] = result.continue_token
    if result.remaining is not None:
        meta["remainingItemCount"] = result.remaining
    if scope.output.shape == "partial":
        head = {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": meta}
    else:
        head = {"kind": rt.list_kind, "apiVersion": scope_api_version(scope), "metadata": meta}
    if scope.output.shape != "table":
        kept = [e for e in map(scope.encoded, result.items) if e is not None]
        if len(kept) == len(result.items):
            return scope.respond_body(_assembled(scope, head, kept))
    items = scope.present_all(result.items)
    if scope.output.shape == "table":
        return scope.respond(
            tables.table(
                rt,
                items,
                resource_version=result.resource_version,
                continue_token=result.continue_token,
                remaining=result.remaining,
                include_object=scope.output.include_object,
            )
        )
    if scope.output.shape == "partial":
        items = [tables.partial_metadata(o) for o in items]
    return scope.respond({**head, "items": items})


def _assembled(scope: Scope, head: dict[str, Any], items: list[Encoded]) -> bytes:
    """The list's body from its items' kept encodings: the same bytes as encoding the whole list."""
    if scope.output.format == "protobuf":
        codec = protobuf_codec()
        raw = codec.encode_list_message(head, [e.data for e in items])
        out: bytes = codec.enveloped(raw, api_version=head["apiVersion"], kind=head["kind"])
        return out
    # orjson writes no whitespace and keeps key order, so the list is its head with ``items`` appended last.
    return b"".join((orjson.dumps(head)[:-1], b',"items":[', b",".join(e.data for e in items), b"]}"))


def scope_api_version(scope: Scope) -> str:
    rt = scope.route.rt
    return f"{rt.group}/{scope.route.version}" if rt.group else scope.route.version
