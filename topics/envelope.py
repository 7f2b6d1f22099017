"""Record envelopes: what the values on each topic look like.

Every value is an orjson object with a schema version ``v``. Decoding is strict
about the envelope and lenient about nothing: a value that is not a valid
envelope raises `MalformedRecord`, and consumers log, count and skip it.

- ``objects``: ``{v, type: ADDED|MODIFIED|DELETED, object, req}`` keyed by
  `object_key`. ``req`` is the id of the request that produced it, so the log
  itself shows that no request was committed twice. A tombstone (no value)
  follows a DELETED record so compaction can drop the key.
- ``requests``: ``{v, id, op, ...}`` — see `Request`.
- ``replies``: ``{v, id, code, object?, status?}`` keyed by the requester id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import orjson

SCHEMA_VERSION = 1

EventType = Literal["ADDED", "MODIFIED", "DELETED"]
EVENT_TYPES: frozenset[str] = frozenset({"ADDED", "MODIFIED", "DELETED"})

Op = Literal["create", "update", "update_status", "patch", "delete"]
OPS: frozenset[str] = frozenset({"create", "update", "update_status", "patch", "delete"})
PATCH_TYPES: frozenset[str] = frozenset({"json", "merge", "strategic", "apply"})


class MalformedRecord(ValueError):
    """A record value that is not a valid envelope."""


def object_key(group: str, resource: str, namespace: str, name: str) -> str:
    """``<group>/<resource>/<namespace>/<name>``; the core group is spelled ``core``."""
    return f"{group or 'core'}/{resource}/{namespace}/{name}"


def split_key(key: str) -> tuple[str, str, str, str]:
    """Inverse of `object_key`: (group, resource, namespace, name); core is ``""``."""
    parts = key.split("/", 3)
    if len(parts) != 4:
        raise MalformedRecord(f"object key {key!r} is not <group>/<resource>/<namespace>/<name>")
    group, resource, namespace, name = parts
    return ("" if group == "core" else group), resource, namespace, name


class ObjectEvent(NamedTuple):
    """A decoded `objects` value (a named tuple: informers decode one per record)."""

    type: EventType
    object: dict[str, Any]
    request_id: str | None = None


def encode_event(type_: EventType, obj: dict[str, Any], *, request_id: str | None = None) -> bytes:
    return orjson.dumps({"v": SCHEMA_VERSION, "type": type_, "object": obj, "req": request_id})


def decode_event(value: bytes) -> ObjectEvent:
    doc = _load(value)
    type_ = doc.get("type")
    obj = doc.get("object")
    if isinstance(type_, list | dict) or type_ not in EVENT_TYPES:  # JSON's unhashables first
        raise MalformedRecord(f"unknown event type {type_!r}")
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        raise MalformedRecord("event object is not an object with metadata")
    req = doc.get("req")
    return ObjectEvent(type_, obj, req if isinstance(req, str) else None)


@dataclass(frozen=True, slots=True)
class UserInfo:
    """The authenticated identity a request is made with."""

    name: str
    groups: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "groups": list(self.groups)}

    @classmethod
    def from_json(cls, doc: Any) -> UserInfo:
        if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
            raise MalformedRecord("request user is missing")
        groups = doc.get("groups") or []
        if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
            raise MalformedRecord("request user groups must be strings")
        return cls(doc["name"], tuple(groups))


@dataclass(frozen=True, slots=True)
class Request:
    """A write command for the committer.

    ``resource`` is the plural resource name and ``group`` its API group (core is
    ``""``). ``object`` carries the body of create/update/update_status; ``patch``
    and ``patch_type`` (json, merge, strategic, apply) carry a patch; ``options``
    carries Kubernetes' query and body options (dryRun, fieldManager, force,
    propagationPolicy, preconditions, fieldValidation, gracePeriodSeconds).
    ``after`` names a request of the same requester this one is chained to: it
    is applied only if that one succeeded, and with ``after_version`` only on
    the version that one wrote (``services.runtime.request_chains``).
    """

    id: str
    op: Op
    group: str
    resource: str
    namespace: str
    name: str
    user: UserInfo
    reply_to: str
    object: dict[str, Any] | None = None
    patch: Any = None
    patch_type: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    version: str = ""
    after: str = ""
    after_version: bool = False

    @property
    def key(self) -> str:
        return object_key(self.group, self.resource, self.namespace, self.name)


def encode_request(req: Request) -> bytes:
    doc: dict[str, Any] = {
        "v": SCHEMA_VERSION,
        "id": req.id,
        "op": req.op,
        "group": req.group,
        "version": req.version,
        "resource": req.resource,
        "namespace": req.namespace,
        "name": req.name,
        "user": req.user.to_json(),
        "replyTo": req.reply_to,
        "object": req.object,
        "patch": req.patch,
        "patchType": req.patch_type,
        "options": req.options,
    }
    if req.after:  # only on chained requests: every other record keeps its bytes
        doc["after"] = req.after
        if req.after_version:
            doc["afterVersion"] = True
    return orjson.dumps(doc)


def decode_request(value: bytes) -> Request:
    doc = _load(value)
    op = doc.get("op")
    if isinstance(op, list | dict) or op not in OPS:  # JSON's unhashables first
        raise MalformedRecord(f"unknown request op {op!r}")
    for name in ("id", "group", "resource", "namespace", "name", "replyTo"):
        if not isinstance(doc.get(name), str):
            raise MalformedRecord(f"request field {name!r} must be a string")
    obj = doc.get("object")
    if obj is not None and not isinstance(obj, dict):
        raise MalformedRecord("request object must be an object")
    options = doc.get("options") or {}
    if not isinstance(options, dict):
        raise MalformedRecord("request options must be an object")
    _check_options(options)
    patch_type = doc.get("patchType")
    if patch_type is not None and not isinstance(patch_type, str):
        raise MalformedRecord("request patchType must be a string")
    if patch_type and patch_type not in PATCH_TYPES:
        raise MalformedRecord(f"unknown request patchType {patch_type!r}")
    version = doc.get("version") or ""
    if not isinstance(version, str):
        raise MalformedRecord("request version must be a string")
    after = doc.get("after") or ""
    if not isinstance(after, str):
        raise MalformedRecord("request field 'after' must be a string")
    after_version = doc.get("afterVersion", False)
    if not isinstance(after_version, bool):
        raise MalformedRecord("request field 'afterVersion' must be a boolean")
    if after_version and not after:
        raise MalformedRecord("request field 'afterVersion' needs 'after'")
    return Request(
        id=doc["id"],
        op=op,
        group=doc["group"],
        version=version,
        resource=doc["resource"],
        namespace=doc["namespace"],
        name=doc["name"],
        user=UserInfo.from_json(doc.get("user")),
        reply_to=doc["replyTo"],
        object=obj,
        patch=doc.get("patch"),
        patch_type=patch_type,
        options=options,
        after=after,
        after_version=after_version,
    )


# The options the committer reads, with the JSON types each may have (null means "not given").
# Other keys pass through untouched.
_OPTION_TYPES: dict[str, tuple[type, ...]] = {
    "dryRun": (list,),
    "fieldManager": (str,),
    "fieldValidation": (str,),
    "force": (bool,),
    "subresource": (str,),
    "propagationPolicy": (str,),
    "gracePeriodSeconds": (int,),
    "preconditions": (dict,),
}


def _check_options(options: dict[str, Any]) -> None:
    """Refuse option values of the wrong JSON type, so a decision never meets them."""
    for name, types in _OPTION_TYPES.items():
        value = options.get(name)
        if value is None:
            continue
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise MalformedRecord(f"request option {name!r} has the wrong type")
    if not all(isinstance(v, str) for v in options.get("dryRun") or ()):
        raise MalformedRecord("request option 'dryRun' must hold strings")
    for key, value in (options.get("preconditions") or {}).items():
        if value is not None and not isinstance(value, str):
            raise MalformedRecord(f"request precondition {key!r} must be a string")


@dataclass(frozen=True, slots=True)
class Reply:
    """The committer's answer: an HTTP code and either the object or a Status."""

    id: str
    code: int
    object: dict[str, Any] | None = None
    status: dict[str, Any] | None = None
    warnings: tuple[str, ...] = ()


def encode_reply(reply: Reply) -> bytes:
    return orjson.dumps(
        {
            "v": SCHEMA_VERSION,
            "id": reply.id,
            "code": reply.code,
            "object": reply.object,
            "status": reply.status,
            "warnings": list(reply.warnings),
        }
    )


def decode_reply(value: bytes) -> Reply:
    doc = _load(value)
    if not isinstance(doc.get("id"), str) or not isinstance(doc.get("code"), int):
        raise MalformedRecord("reply needs an id and a code")
    obj, status = doc.get("object"), doc.get("status")
    if obj is not None and not isinstance(obj, dict):
        raise MalformedRecord("reply object must be an object")
    if status is not None and not isinstance(status, dict):
        raise MalformedRecord("reply status must be an object")
    warnings = doc.get("warnings") or []
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        raise MalformedRecord("reply warnings must be strings")
    return Reply(doc["id"], doc["code"], obj, status, tuple(warnings))


def _load(value: bytes | None) -> dict[str, Any]:
    if value is None:
        raise MalformedRecord("empty value")
    try:
        doc = orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        raise MalformedRecord(f"not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise MalformedRecord("envelope is not a JSON object")
    v = doc.get("v")
    if v != SCHEMA_VERSION:
        raise MalformedRecord(f"unsupported envelope schema version {v!r}")
    return doc
