"""Per-field patch and merge metadata of the kinds draplane serves, keyed by path.

Strategic merge patch and server-side apply both need to know, field by
field, what Kubernetes' Go types declare:

- the struct tags ``patchStrategy`` (``merge``, ``replace``, ``retainKeys``)
  and ``patchMergeKey``, which strategic merge patch reads;
- the markers ``+listType`` (``atomic``, ``set``, ``map``), ``+listMapKey``,
  ``+structType=atomic`` and ``+mapType=atomic``, which server-side apply
  (structured-merge-diff) reads.

The two sets of markers disagree in places and both are reproduced: for
example ``PodStatus.hostIPs`` merges by ``ip`` in a strategic merge patch but
is an atomic list for apply, and ``PodSchedulingContextStatus.resourceClaims``
is a map list for apply but is replaced by a strategic merge patch.

Only fields whose metadata differs from the defaults are listed. The
defaults are those of a field without markers: a list is atomic (replaced
whole by both mechanisms), an object is merged field by field. Paths are
dotted field names from the object root; ``[]`` selects the elements of a
list. Values transcribed from ``k8s.io/api`` v0.31 (``core/v1``,
``resource/v1alpha3``) and ``k8s.io/apimachinery`` ``meta/v1``.

Also here, because they are per-kind facts the field manager needs:

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
from typing import Any

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
ATOMIC_LIST = FieldMeta(list_type=LIST_ATOMIC)


def merge_list(key: str, *, retain_keys: bool = False) -> FieldMeta:
    """``patchStrategy=merge patchMergeKey=<key> +listType=map +listMapKey=<key>``."""
    strategies = ("merge", "retainKeys") if retain_keys else ("merge",)
    return FieldMeta(strategies, key, LIST_MAP, (key,))


def _under(prefix: str, fragment: Mapping[str, FieldMeta]) -> dict[str, FieldMeta]:
    return {f"{prefix}.{path}": meta for path, meta in fragment.items()}


# ---------------------------------------------------------------- meta/v1

OBJECT_META: dict[str, FieldMeta] = {
    "ownerReferences": merge_list("uid"),
    "ownerReferences[]": ATOMIC,  # OwnerReference is +structType=atomic
    "finalizers": FieldMeta(("merge",), "", LIST_SET),
    "managedFields": ATOMIC_LIST,
}

# ---------------------------------------------------------------- core/v1

CONTAINER: dict[str, FieldMeta] = {
    "command": ATOMIC_LIST,
    "args": ATOMIC_LIST,
    "ports": FieldMeta(
        ("merge",), "containerPort", LIST_MAP, ("containerPort", "protocol"), (("protocol", "TCP"),)
    ),
    "envFrom": ATOMIC_LIST,
    "env": merge_list("name"),
    "env[].valueFrom.fieldRef": ATOMIC,
    "env[].valueFrom.resourceFieldRef": ATOMIC,
    "env[].valueFrom.configMapKeyRef": ATOMIC,
    "env[].valueFrom.secretKeyRef": ATOMIC,
    "resources.claims": FieldMeta(list_type=LIST_MAP, list_map_keys=("name",)),
    "resizePolicy": ATOMIC_LIST,
    "volumeMounts": merge_list("mountPath"),
    "volumeDevices": merge_list("devicePath"),
}

POD_SPEC: dict[str, FieldMeta] = {
    "volumes": merge_list("name", retain_keys=True),
    "volumes[].projected.sources": ATOMIC_LIST,
    "volumes[].ephemeral.volumeClaimTemplate.spec.selector": ATOMIC,  # LabelSelector
    "volumes[].ephemeral.volumeClaimTemplate.spec.dataSource": ATOMIC,  # TypedLocalObjectReference
    **_under("volumes[].ephemeral.volumeClaimTemplate.metadata", OBJECT_META),
    "initContainers": merge_list("name"),
    **_under("initContainers[]", CONTAINER),
    "containers": merge_list("name"),
    **_under("containers[]", CONTAINER),
    "ephemeralContainers": merge_list("name"),
    **_under("ephemeralContainers[]", CONTAINER),
    "nodeSelector": ATOMIC,  # +mapType=atomic
    "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution": ATOMIC,  # NodeSelector
    "imagePullSecrets": merge_list("name"),
    "imagePullSecrets[]": ATOMIC,  # LocalObjectReference
    "tolerations": ATOMIC_LIST,
    "hostAliases": merge_list("ip"),
    "readinessGates": ATOMIC_LIST,
    "topologySpreadConstraints": FieldMeta(
        ("merge",), "topologyKey", LIST_MAP, ("topologyKey", "whenUnsatisfiable")
    ),
    "topologySpreadConstraints[].labelSelector": ATOMIC,
    "schedulingGates": merge_list("name"),
    "resourceClaims": merge_list("name", retain_keys=True),
}

POD_STATUS: dict[str, FieldMeta] = {
    "conditions": merge_list("type"),
    "hostIPs": FieldMeta(("merge",), "ip", LIST_ATOMIC),
    "podIPs": merge_list("ip"),
    "initContainerStatuses": ATOMIC_LIST,
    "containerStatuses": ATOMIC_LIST,
    "ephemeralContainerStatuses": ATOMIC_LIST,
    "resourceClaimStatuses": merge_list("name", retain_keys=True),
}

POD: dict[str, FieldMeta] = {
    **_under("metadata", OBJECT_META),
    **_under("spec", POD_SPEC),
    **_under("status", POD_STATUS),
}

NODE: dict[str, FieldMeta] = {
    **_under("metadata", OBJECT_META),
    "spec.podCIDRs": FieldMeta(("merge",), "", LIST_SET),
    "spec.taints": ATOMIC_LIST,
    "status.conditions": merge_list("type"),
    "status.addresses": merge_list("type"),
    "status.images": ATOMIC_LIST,
    "status.volumesInUse": ATOMIC_LIST,
    "status.volumesAttached": ATOMIC_LIST,
    "status.runtimeHandlers": ATOMIC_LIST,
}

NAMESPACE: dict[str, FieldMeta] = {
    **_under("metadata", OBJECT_META),
    "spec.finalizers": ATOMIC_LIST,
    "status.conditions": merge_list("type"),
}

EVENT: dict[str, FieldMeta] = {
    **_under("metadata", OBJECT_META),
    "involvedObject": ATOMIC,  # ObjectReference is +structType=atomic
    "related": ATOMIC,
}

BINDING: dict[str, FieldMeta] = {
    **_under("metadata", OBJECT_META),
    "target": ATOMIC,
}

# ---------------------------------------------------------------- resource.k8s.io/v1alpha3

DEVICE_CLASS: dict[str, FieldMeta] = {
    **_under("metadata", OBJECT_META),
    "spec.selectors": ATOMIC_LIST,
    "spec.config": ATOMIC_LIST,
    "spec.suitableNodes": ATOMIC,  # core/v1 NodeSelector
}

CLAIM_SPEC: dict[str, FieldMeta] = {
    "devices.requests": ATOMIC_LIST,
    "devices.requests[].selectors": ATOMIC_LIST,
    "devices.constraints": ATOMIC_LIST,
    "devices.constraints[].requests": ATOMIC_LIST,
    "devices.config": ATOMIC_LIST,
    "devices.config[].requests": ATOMIC_LIST,
}

CLAIM_STATUS: dict[str, FieldMeta] = {
    "allocation.devices.results": ATOMIC_LIST,
    "allocation.devices.config": ATOMIC_LIST,
    "allocation.devices.config[].requests": ATOMIC_LIST,
    "allocation.nodeSelector": ATOMIC,
    "reservedFor": merge_list("uid"),
}

RESOURCE_CLAIM: dict[str, FieldMeta] = {
    **_under("metadata", OBJECT_META),
    **_under("spec", CLAIM_SPEC),
    **_under("status", CLAIM_STATUS),
}

RESOURCE_CLAIM_TEMPLATE: dict[str, FieldMeta] = {
    **_under("metadata", OBJECT_META),
    **_under("spec.metadata", OBJECT_META),
    **_under("spec.spec", CLAIM_SPEC),
}

RESOURCE_SLICE: dict[str, FieldMeta] = {
    **_under("metadata", OBJECT_META),
    "spec.nodeSelector": ATOMIC,
    "spec.devices": ATOMIC_LIST,
}

POD_SCHEDULING_CONTEXT: dict[str, FieldMeta] = {
    **_under("metadata", OBJECT_META),
    "spec.potentialNodes": ATOMIC_LIST,
    "status.resourceClaims": FieldMeta(list_type=LIST_MAP, list_map_keys=("name",)),
    "status.resourceClaims[].unsuitableNodes": ATOMIC_LIST,
}

# ---------------------------------------------------------------- zero objects and reset fields

_META_ZERO: dict[str, Any] = {"creationTimestamp": None}
_CLAIM_SPEC_ZERO: dict[str, Any] = {"devices": {"requests": None}}


@dataclass(frozen=True, slots=True)
class _KindRow:
    api_version: str
    kind: str
    fields: Mapping[str, FieldMeta]
    zero: Mapping[str, Any]
    reset: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


_ROWS: tuple[_KindRow, ...] = (
    _KindRow(
        "v1", "Namespace", NAMESPACE, {"metadata": _META_ZERO, "spec": {}, "status": {}},
        {"": ("status",), "status": ("spec",)},
    ),
    _KindRow(
        "v1", "Node", NODE,
        {"metadata": _META_ZERO, "spec": {}, "status": {"daemonEndpoints": {"kubeletEndpoint": {}}, "nodeInfo": {}}},
        {"": ("status",), "status": ("spec",)},
    ),
    _KindRow(
        "v1", "Pod", POD, {"metadata": _META_ZERO, "spec": {"containers": None}, "status": {}},
        {"": ("status",), "status": ("spec", "metadata.deletionTimestamp", "metadata.ownerReferences")},
    ),
    _KindRow(
        "v1", "Event", EVENT,
        {
            "metadata": _META_ZERO, "involvedObject": {}, "source": {},
            "firstTimestamp": None, "lastTimestamp": None, "eventTime": None,
        },
    ),
    _KindRow("v1", "Binding", BINDING, {"metadata": _META_ZERO, "target": {}}),
    _KindRow("resource.k8s.io/v1alpha3", "DeviceClass", DEVICE_CLASS, {"metadata": _META_ZERO, "spec": {}}),
    _KindRow(
        "resource.k8s.io/v1alpha3", "ResourceClaim", RESOURCE_CLAIM,
        {"metadata": _META_ZERO, "spec": _CLAIM_SPEC_ZERO, "status": {}},
        {"": ("status",), "status": ("spec",)},
    ),
    _KindRow(
        "resource.k8s.io/v1alpha3", "ResourceClaimTemplate", RESOURCE_CLAIM_TEMPLATE,
        {"metadata": _META_ZERO, "spec": {"metadata": _META_ZERO, "spec": _CLAIM_SPEC_ZERO}},
    ),
    _KindRow(
        "resource.k8s.io/v1alpha3", "ResourceSlice", RESOURCE_SLICE,
        {"metadata": _META_ZERO, "spec": {"pool": {}, "devices": None}},
    ),
    _KindRow(
        "resource.k8s.io/v1alpha3", "PodSchedulingContext", POD_SCHEDULING_CONTEXT,
        {"metadata": _META_ZERO, "spec": {}, "status": {}},
        {"": ("status",), "status": ("spec",)},
    ),
)


# ---------------------------------------------------------------- lookup


class SchemaNode:
    """One position in a kind's field tree: its metadata and its known children."""

    __slots__ = ("children", "meta")

    def __init__(self, meta: FieldMeta = DEFAULT) -> None:
        self.meta = meta
        self.children: dict[str, SchemaNode] = {}

    def field(self, name: str) -> SchemaNode:
        """The node of member ``name`` (an undeclared member has default metadata)."""
        return self.children.get(name, _EMPTY)

    def item(self) -> SchemaNode:
        """The node of this list's elements."""
        return self.children.get("[]", _EMPTY)


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


def _build(fields: Mapping[str, FieldMeta]) -> SchemaNode:
    root = SchemaNode()
    for path, meta in fields.items():
        node = root
        for part in _split(path):
            node = node.children.setdefault(part, SchemaNode())
        node.meta = meta
    return root


@dataclass(frozen=True, slots=True)
class KindSchema:
    """Everything the patch machinery knows about one kind at its storage version."""

    api_version: str
    kind: str
    fields: Mapping[str, FieldMeta]
    root: SchemaNode
    zero: Mapping[str, Any]
    reset: Mapping[str, tuple[str, ...]]

    def meta(self, path: str) -> FieldMeta:
        """The metadata of the field at a dotted path (``spec.containers[].ports``)."""
        node = self.root
        for part in _split(path):
            node = node.children.get(part, _EMPTY)
        return node.meta

    def zero_object(self) -> dict[str, Any]:
        """A fresh copy of the kind's zero value as unstructured JSON."""
        return copy.deepcopy(dict(self.zero))

    def reset_fields(self, subresource: str = "") -> tuple[str, ...]:
        """Dotted paths a write through ``subresource`` ("" = the main resource) never owns."""
        return self.reset.get(subresource, ())


_SCHEMAS: dict[tuple[str, str], KindSchema] = {
    (row.api_version, row.kind): KindSchema(
        row.api_version, row.kind, row.fields, _build(row.fields), row.zero, row.reset
    )
    for row in _ROWS
}


def schema_for(api_version: str, kind: str) -> KindSchema | None:
    """The schema of a kind at its storage version, or None for kinds draplane does not serve."""
    return _SCHEMAS.get((api_version, kind))


def kinds() -> tuple[tuple[str, str], ...]:
    """(apiVersion, kind) of every kind with patch metadata."""
    return tuple(_SCHEMAS)
