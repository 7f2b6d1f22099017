"""Per-field patch and merge metadata of the kinds draplane serves, read from Kubernetes' schemas.

Strategic merge patch and server-side apply both need to know, field by
field, what Kubernetes' Go types declare:

- the struct tags ``patchStrategy`` (``merge``, ``replace``, ``retainKeys``)
  and ``patchMergeKey``, which strategic merge patch reads;
- the markers ``+listType`` (``atomic``, ``set``, ``map``), ``+listMapKey``,
  ``+structType=atomic`` and ``+mapType=atomic``, which server-side apply
  (structured-merge-diff) reads.

Kubernetes publishes both in its OpenAPI schemas (``x-kubernetes-patch-strategy``,
``x-kubernetes-patch-merge-key``, ``x-kubernetes-list-type``,
``x-kubernetes-list-map-keys``, ``x-kubernetes-map-type``), and they are read
from there (`services.api.types.schemas`, Kubernetes 1.31), walking a kind's
definition lazily as the patch machinery descends into an object. The two sets
of markers disagree in places and both are kept: for example
``PodStatus.hostIPs`` merges by ``ip`` in a strategic merge patch but is an
atomic list for apply, and ``PodSchedulingContextStatus.resourceClaims`` is a
map list for apply but is replaced by a strategic merge patch. A field without
markers is an atomic list (replaced whole by both mechanisms) or an object
merged field by field.

Hand-written here, because the schemas do not carry them:

- the *defaults of map-list keys* (`KEY_DEFAULTS`: a port's ``protocol`` is
  ``TCP``), which structured-merge-diff reads from the OpenAPI ``default``
  that the published schemas leave out;
- the *zero object* of each kind: what the Go zero value of the type looks
  like as unstructured JSON (``metadata.creationTimestamp: null``, empty
  structs, ``null`` for slices without ``omitempty``). Field tracking on
  create compares against it, which decides where managed fields carry a
  ``"."`` member;
- the *reset fields* of each kind and subresource (the registry strategies'
  ``GetResetFields``): fields a write through that endpoint cannot change and
  that are therefore never recorded as owned by it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from services.api.types.schemas import Property, Schemas, TypeRef, schemas

LIST_ATOMIC = "atomic"
LIST_SET = "set"
LIST_MAP = "map"


@dataclass(frozen=True, slots=True)
class FieldMeta:
    """What the Go type declares about one field."""

    patch_strategies: tuple[str, ...] = ()  # strategic merge: "merge", "replace", "retainKeys"
    patch_merge_key: str = ""  # strategic merge
    list_type: str = LIST_ATOMIC  # apply: atomic | set | map (meaningful for lists only)
    list_map_keys: tuple[str, ...] = ()  # apply: keys of a map list
    key_defaults: tuple[tuple[str, Any], ...] = ()  # apply: defaults of map list keys
    atomic: bool = False  # apply: +structType=atomic / +mapType=atomic

    @property
    def patch_strategy(self) -> str:
        """The strategy other than ``retainKeys`` (``extractRetainKeysPatchStrategy``)."""
        others = [s for s in self.patch_strategies if s != "retainKeys"]
        return others[0] if others else ""

    @property
    def retain_keys(self) -> bool:
        return "retainKeys" in self.patch_strategies


DEFAULT = FieldMeta()
ATOMIC = FieldMeta(atomic=True)

_RELEASE = "1.31"

# Definition of a map list's item type → defaults of its keys (the OpenAPI
# ``default`` of the key field, which the published schemas leave out).
KEY_DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "io.k8s.api.core.v1.ContainerPort": {"protocol": "TCP"},
    "io.k8s.api.core.v1.ServicePort": {"protocol": "TCP"},  # +default="TCP" in k8s.io/api core/v1 types.go
}


def _atomic(defs: Schemas, tp: TypeRef) -> bool:
    return tp.kind == "ref" and defs.get(tp.ref).map_type == "atomic"


def _field_meta(defs: Schemas, prop: Property) -> FieldMeta:
    """What a property's markers say, in the patch machinery's terms."""
    tp = prop.type
    is_list = tp.kind == "array"
    atomic = _atomic(defs, tp) or (tp.kind == "map" and prop.map_type == "atomic")
    key_defaults: tuple[tuple[str, Any], ...] = ()
    if is_list and tp.item is not None and tp.item.kind == "ref":
        defaults = KEY_DEFAULTS.get(tp.item.ref, {})
        key_defaults = tuple((key, defaults[key]) for key in prop.list_map_keys if key in defaults)
    meta = FieldMeta(
        patch_strategies=tuple(s for s in prop.patch_strategy.split(",") if s),
        patch_merge_key=prop.patch_merge_key,
        list_type=(prop.list_type or LIST_ATOMIC) if is_list else LIST_ATOMIC,
        list_map_keys=prop.list_map_keys if is_list else (),
        key_defaults=key_defaults,
        atomic=atomic,
    )
    return DEFAULT if meta == DEFAULT else ATOMIC if meta == ATOMIC else meta


# ---------------------------------------------------------------- zero objects and reset fields

_META_ZERO: dict[str, Any] = {"creationTimestamp": None}
_CLAIM_SPEC_ZERO: dict[str, Any] = {"devices": {"requests": None}}


@dataclass(frozen=True, slots=True)
class _KindRow:
    api_version: str
    kind: str
    zero: Mapping[str, Any]
    reset: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


_ROWS: tuple[_KindRow, ...] = (
    _KindRow(
        "v1", "Namespace", {"metadata": _META_ZERO, "spec": {}, "status": {}},
        {"": ("status",), "status": ("spec",)},
    ),
    _KindRow(
        "v1", "Node",
        {"metadata": _META_ZERO, "spec": {}, "status": {"daemonEndpoints": {"kubeletEndpoint": {}}, "nodeInfo": {}}},
        {"": ("status",), "status": ("spec",)},
    ),
    _KindRow(
        "v1", "Pod", {"metadata": _META_ZERO, "spec": {"containers": None}, "status": {}},
        {"": ("status",), "status": ("spec", "metadata.deletionTimestamp", "metadata.ownerReferences")},
    ),
    _KindRow(
        "v1", "Event",
        {
            "metadata": _META_ZERO, "involvedObject": {}, "source": {},
            "firstTimestamp": None, "lastTimestamp": None, "eventTime": None,
        },
    ),
    _KindRow(
        "events.k8s.io/v1", "Event",
        {
            "metadata": _META_ZERO, "eventTime": None, "regarding": {}, "deprecatedSource": {},
            "deprecatedFirstTimestamp": None, "deprecatedLastTimestamp": None,
        },
    ),
    _KindRow("v1", "Binding", {"metadata": _META_ZERO, "target": {}}),
    _KindRow(
        "v1", "Service", {"metadata": _META_ZERO, "spec": {}, "status": {"loadBalancer": {}}},
        {"": ("status",), "status": ("spec",)},
    ),
    _KindRow("coordination.k8s.io/v1", "Lease", {"metadata": _META_ZERO, "spec": {}}),
    _KindRow("resource.k8s.io/v1alpha3", "DeviceClass", {"metadata": _META_ZERO, "spec": {}}),
    _KindRow(
        "resource.k8s.io/v1alpha3", "ResourceClaim",
        {"metadata": _META_ZERO, "spec": _CLAIM_SPEC_ZERO, "status": {}},
        {"": ("status",), "status": ("spec",)},
    ),
    _KindRow(
        "resource.k8s.io/v1alpha3", "ResourceClaimTemplate",
        {"metadata": _META_ZERO, "spec": {"metadata": _META_ZERO, "spec": _CLAIM_SPEC_ZERO}},
    ),
    _KindRow(
        "resource.k8s.io/v1alpha3", "ResourceSlice",
        {"metadata": _META_ZERO, "spec": {"pool": {}, "devices": None}},
    ),
    _KindRow(
        "resource.k8s.io/v1alpha3", "PodSchedulingContext",
        {"metadata": _META_ZERO, "spec": {}, "status": {}},
        {"": ("status",), "status": ("spec",)},
    ),
    # Kubernetes 1.37's versions, read from its schemas (`_RELEASE_1_37`).
    *(
        row
        for version in ("v1", "v1beta2", "v1beta1")
        for row in (
            _KindRow(f"resource.k8s.io/{version}", "DeviceClass", {"metadata": _META_ZERO, "spec": {}}),
            _KindRow(
                f"resource.k8s.io/{version}", "ResourceClaim",
                {"metadata": _META_ZERO, "spec": _CLAIM_SPEC_ZERO, "status": {}},
                {"": ("status",), "status": ("spec",)},
            ),
            _KindRow(
                f"resource.k8s.io/{version}", "ResourceClaimTemplate",
                {"metadata": _META_ZERO, "spec": {"metadata": _META_ZERO, "spec": _CLAIM_SPEC_ZERO}},
            ),
            _KindRow(
                f"resource.k8s.io/{version}", "ResourceSlice",
                {"metadata": _META_ZERO, "spec": {"pool": {}, "devices": None}},
            ),
        )
    ),
    *(
        _KindRow(
            f"resource.k8s.io/{version}", "DeviceTaintRule",
            {"metadata": _META_ZERO, "spec": {"taint": {"key": "", "effect": ""}}, "status": {}},
            {"": ("status",), "status": ("spec",)},
        )
        for version in ("v1", "v1beta2")
    ),
)
# Kubernetes 1.37's versions of resource.k8s.io take their markers from 1.37's schemas.
_RELEASE_1_37 = "1.37"
_VERSIONS_1_37 = frozenset({"resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"})


# ---------------------------------------------------------------- lookup


class SchemaNode:
    """One position in a kind's field tree: its metadata and its children, resolved from the schema on first use."""

    __slots__ = ("_children", "_defs", "_map_value", "_type", "meta")

    def __init__(self, meta: FieldMeta = DEFAULT, *, defs: Schemas | None = None, type_: TypeRef | None = None) -> None:
        self.meta = meta
        self._defs = defs
        self._type = type_
        self._children: dict[str, SchemaNode] | None = None
        self._map_value: SchemaNode | None = None

    def field(self, name: str) -> SchemaNode:
        """The node of member ``name`` (a map's value; an undeclared member has default metadata)."""
        children = self._expand()
        if self._map_value is not None:
            return self._map_value
        return children.get(name, _EMPTY)

    def item(self) -> SchemaNode:
        """The node of this list's elements."""
        return self._expand().get("[]", _EMPTY)

    def _expand(self) -> dict[str, SchemaNode]:
        if self._children is not None:
            return self._children
        children: dict[str, SchemaNode] = {}
        defs, tp = self._defs, self._type
        if defs is not None and tp is not None:
            if tp.kind == "ref" and not defs.get(tp.ref).scalar:
                for name, prop in defs.get(tp.ref).properties.items():
                    children[name] = SchemaNode(_field_meta(defs, prop), defs=defs, type_=prop.type)
            elif tp.kind in ("array", "map") and tp.item is not None:
                node = SchemaNode(ATOMIC if _atomic(defs, tp.item) else DEFAULT, defs=defs, type_=tp.item)
                if tp.kind == "array":
                    children["[]"] = node
                else:
                    self._map_value = node
        self._children = children
        return children


_EMPTY = SchemaNode()


def _split(path: str) -> list[str]:
    parts: list[str] = []
    for name in path.split("."):
        if not name:
            continue
        while name.endswith("[]"):
            name = name[:-2]
            if name:
                parts.append(name)
            parts.append("[]")
            name = ""
        if name:
            parts.append(name)
    return parts


@dataclass(frozen=True, slots=True)
class KindSchema:
    """Everything the patch machinery knows about one kind at its storage version."""

    api_version: str
    kind: str
    definition: str  # the kind's schema definition (io.k8s.api.core.v1.Pod)
    root: SchemaNode
    zero: Mapping[str, Any]
    reset: Mapping[str, tuple[str, ...]]

    def meta(self, path: str) -> FieldMeta:
        """The metadata of the field at a dotted path (``spec.containers[].ports``)."""
        node = self.root
        for part in _split(path):
            node = node.item() if part == "[]" else node.field(part)
        return node.meta

    def zero_object(self) -> dict[str, Any]:
        """A fresh copy of the kind's zero value as unstructured JSON."""
        return copy.deepcopy(dict(self.zero))

    def reset_fields(self, subresource: str = "") -> tuple[str, ...]:
        """Dotted paths a write through ``subresource`` ("" = the main resource) never owns."""
        return self.reset.get(subresource, ())


_ROW_BY_KEY: dict[tuple[str, str], _KindRow] = {(row.api_version, row.kind): row for row in _ROWS}


@cache
def _schema(api_version: str, kind: str) -> KindSchema:
    row = _ROW_BY_KEY[(api_version, kind)]
    defs = schemas(release_of(api_version))
    group, _, version = api_version.rpartition("/")
    definition = defs.kind(group, version, kind).name
    root = SchemaNode(defs=defs, type_=TypeRef("ref", ref=definition))
    return KindSchema(row.api_version, row.kind, definition, root, row.zero, row.reset)


def release_of(api_version: str) -> str:
    """The Kubernetes release whose schemas give a version's markers (1.37's for v1, v1beta2, v1beta1)."""
    return _RELEASE_1_37 if api_version in _VERSIONS_1_37 else _RELEASE


def schema_for(api_version: str, kind: str) -> KindSchema | None:
    """The schema of a kind at its storage version, or None for kinds draplane does not serve."""
    if (api_version, kind) not in _ROW_BY_KEY:
        return None
    return _schema(api_version, kind)


def kinds() -> tuple[tuple[str, str], ...]:
    """(apiVersion, kind) of every kind with patch metadata."""
    return tuple(_ROW_BY_KEY)
