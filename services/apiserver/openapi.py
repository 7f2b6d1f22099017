"""OpenAPI v2 and v3 documents, generated from the typed models.

kubectl reads OpenAPI before it writes (see the kubectl 1.32 request notes):

- it looks, in ``/openapi/v3/<group-version>``, for a PATCH operation carrying
  ``x-kubernetes-group-version-kind`` and a ``fieldValidation`` query
  parameter; with it, kubectl sends ``fieldValidation=Strict`` and leaves
  schema checks to the server;
- client-side ``apply`` computes strategic merge patches from the schemas'
  ``x-kubernetes-patch-merge-key`` / ``x-kubernetes-patch-strategy``;
- ``kubectl explain`` prints the schemas.

The schemas come from walking the msgspec models (`services.api.types`) with
``msgspec.inspect``: struct → object with properties, ``Int32`` → integer
int32, ``Time`` → date-time, Quantity / IntOrString → Kubernetes' shared
definitions. The patch-strategy and list-type markers Kubernetes declares in
Go comments (``+patchStrategy=merge``, ``+listType=map``...) are the table
`LIST_MARKERS`. Documents are built once and served as bytes with an ETag.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

from services.api.types import MODELS, registry
from services.api.types import core_v1 as core_models
from services.api.types import meta as meta_models
from services.api.types.registry import ResourceType
from services.apiserver.discovery import Document

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
TIME = META + "Time"
MICRO_TIME = META + "MicroTime"
PATCH = META + "Patch"
V3_REF = "#/components/schemas/"
V2_REF = "#/definitions/"

_MODULE_PREFIX = {
    "services.api.types.meta": META,
    "services.api.types.core_v1": "io.k8s.api.core.v1.",
    "services.api.types.resource_v1alpha3": "io.k8s.api.resource.v1alpha3.",
}

_MERGE = "x-kubernetes-patch-strategy"
_KEY = "x-kubernetes-patch-merge-key"
_LIST = "x-kubernetes-list-type"
_MAP_KEYS = "x-kubernetes-list-map-keys"


def _m(strategy: str = "", key: str = "", list_type: str = "", map_keys: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if strategy:
        out[_MERGE] = strategy
    if key:
        out[_KEY] = key
    if list_type:
        out[_LIST] = list_type
    if map_keys:
        out[_MAP_KEYS] = list(map_keys)
    return out


_CORE = "io.k8s.api.core.v1."
_RES = "io.k8s.api.resource.v1alpha3."
_CONTAINER_MARKERS = {
    "ports": _m("merge", "containerPort", "map", ("containerPort", "protocol")),
    "env": _m("merge", "name", "map", ("name",)),
    "envFrom": _m(list_type="atomic"),
    "volumeMounts": _m("merge", "mountPath", "map", ("mountPath",)),
    "volumeDevices": _m("merge", "devicePath", "map", ("devicePath",)),
    "resizePolicy": _m(list_type="atomic"),
    "command": _m(list_type="atomic"),
    "args": _m(list_type="atomic"),
}

# (definition name, JSON field) → the Go markers Kubernetes 1.31 puts on that list.
LIST_MARKERS: dict[tuple[str, str], dict[str, Any]] = {
    (META + "ObjectMeta", "ownerReferences"): _m("merge", "uid", "map", ("uid",)),
    (META + "ObjectMeta", "finalizers"): _m("merge", list_type="set"),
    (META + "ObjectMeta", "managedFields"): _m(list_type="atomic"),
    (_CORE + "PodSpec", "volumes"): _m("merge,retainKeys", "name", "map", ("name",)),
    (_CORE + "PodSpec", "initContainers"): _m("merge", "name", "map", ("name",)),
    (_CORE + "PodSpec", "containers"): _m("merge", "name", "map", ("name",)),
    (_CORE + "PodSpec", "ephemeralContainers"): _m("merge", "name", "map", ("name",)),
    (_CORE + "PodSpec", "imagePullSecrets"): _m("merge", "name", "map", ("name",)),
    (_CORE + "PodSpec", "tolerations"): _m(list_type="atomic"),
    (_CORE + "PodSpec", "hostAliases"): _m("merge", "ip", "map", ("ip",)),
    (_CORE + "PodSpec", "readinessGates"): _m(list_type="atomic"),
    (_CORE + "PodSpec", "topologySpreadConstraints"): _m(
        "merge", "topologyKey", "map", ("topologyKey", "whenUnsatisfiable")
    ),
    (_CORE + "PodSpec", "resourceClaims"): _m("merge,retainKeys", "name", "map", ("name",)),
    (_CORE + "PodSpec", "schedulingGates"): _m("merge", "name", "map", ("name",)),
    (_CORE + "PodStatus", "conditions"): _m("merge", "type", "map", ("type",)),
    (_CORE + "PodStatus", "podIPs"): _m("merge", "ip", "map", ("ip",)),
    (_CORE + "PodStatus", "hostIPs"): _m("merge", "ip", "atomic"),
    (_CORE + "PodStatus", "resourceClaimStatuses"): _m("merge,retainKeys", "name", "map", ("name",)),
    (_CORE + "PodStatus", "containerStatuses"): _m(list_type="atomic"),
    (_CORE + "PodStatus", "initContainerStatuses"): _m(list_type="atomic"),
    (_CORE + "PodStatus", "ephemeralContainerStatuses"): _m(list_type="atomic"),
    (_CORE + "ResourceRequirements", "claims"): _m(list_type="map", map_keys=("name",)),
    (_CORE + "NodeSpec", "podCIDRs"): _m("merge", list_type="set"),
    (_CORE + "NodeSpec", "taints"): _m(list_type="atomic"),
    (_CORE + "NodeStatus", "conditions"): _m("merge", "type", "map", ("type",)),
    (_CORE + "NodeStatus", "addresses"): _m("merge", "type", "map", ("type",)),
    (_CORE + "NodeStatus", "images"): _m(list_type="atomic"),
    (_CORE + "NodeStatus", "volumesInUse"): _m(list_type="atomic"),
    (_CORE + "NodeStatus", "volumesAttached"): _m(list_type="atomic"),
    (_CORE + "NamespaceSpec", "finalizers"): _m(list_type="atomic"),
    (_CORE + "NamespaceStatus", "conditions"): _m("merge", "type", "map", ("type",)),
    (_RES + "ResourceClaimStatus", "reservedFor"): _m("merge", "uid", "map", ("uid",)),
    (_RES + "ResourceClaimStatus", "devices"): _m(list_type="map", map_keys=("driver", "device", "pool")),
    (_RES + "PodSchedulingContextSpec", "potentialNodes"): _m(list_type="atomic"),
    (_RES + "PodSchedulingContextStatus", "resourceClaims"): _m(list_type="map", map_keys=("name",)),
}
for _kind in ("Container", "EphemeralContainer"):
    for _field, _markers in _CONTAINER_MARKERS.items():
        LIST_MARKERS[(_CORE + _kind, _field)] = _markers

_SHARED: dict[str, dict[str, Any]] = {
    QUANTITY: {
        "description": (
            "Quantity is a fixed-point representation of a number. It provides convenient "
            "marshaling/unmarshaling in JSON and YAML, in addition to String() and AsInt64() accessors."
        ),
        "type": "string",
    },
    INT_OR_STRING: {
        "description": "IntOrString is a type that can hold an int32 or a string.",
        "type": "string",
        "format": "int-or-string",
    },
    TIME: {
        "description": "Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON.",
        "type": "string",
        "format": "date-time",
    },
    MICRO_TIME: {
        "description": "MicroTime is version of Time with microsecond level precision.",
        "type": "string",
        "format": "date-time",
    },
    PATCH: {
        "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
        "type": "object",
    },
}


def definition_name(cls: type) -> str:
    prefix = _MODULE_PREFIX.get(cls.__module__)
    if prefix is None:
        prefix = "io.draplane." + cls.__module__.rsplit(".", 1)[-1] + "."
    return prefix + cls.__name__


class SchemaBuilder:
    """Walks msgspec types into Kubernetes-shaped OpenAPI schemas (v3 refs)."""

    def __init__(self) -> None:
        self.components: dict[str, dict[str, Any]] = {}

    def add(self, cls: type) -> str:
        info = msgspec.inspect.type_info(cls)
        return self._struct(info)

    def _ref(self, name: str) -> dict[str, Any]:
        if name in _SHARED:
            self.components.setdefault(name, _SHARED[name])
        return {"$ref": V3_REF + name}

    def _struct(self, info: Any) -> str:
        cls = info.cls
        name = definition_name(cls)
        if name in self.components:
            return name
        schema: dict[str, Any] = {"type": "object"}
        self.components[name] = schema  # placed first so recursion terminates
        doc = (cls.__doc__ or "").strip()
        if doc and not doc.startswith(cls.__name__ + "("):
            schema["description"] = " ".join(doc.split())
        props: dict[str, Any] = {}
        for f in info.fields:
            prop = self.schema(f.type)
            markers = LIST_MARKERS.get((name, f.encode_name))
            if markers:
                prop = {**prop, **markers}
            props[f.encode_name] = prop
        schema["properties"] = props
        return name

    def schema(self, t: Any) -> dict[str, Any]:
        mi = msgspec.inspect
        if isinstance(t, mi.Metadata):
            tag = (t.extra or {}).get("k8s")
            if tag == "int32":
                return {"type": "integer", "format": "int32"}
            if tag == "int64":
                return {"type": "integer", "format": "int64"}
            if tag == "quantity":
                return self._ref(QUANTITY)
            if tag == "time":
                return self._ref(TIME)
            if tag == "microtime":
                return self._ref(MICRO_TIME)
            return self.schema(t.type)
        if isinstance(t, mi.UnionType):
            members = [m for m in t.types if not isinstance(m, mi.NoneType)]
            tags = {(m.extra or {}).get("k8s") for m in members if isinstance(m, mi.Metadata)}
            if "quantity" in tags:
                return self._ref(QUANTITY)
            if "int32" in tags and any(isinstance(m, mi.StrType) for m in members):
                return self._ref(INT_OR_STRING)
            if len(members) == 1:
                return self.schema(members[0])
            return {}
        if isinstance(t, mi.StrType):
            return {"type": "string"}
        if isinstance(t, mi.BoolType):
            return {"type": "boolean"}
        if isinstance(t, mi.IntType):
            return {"type": "integer", "format": "int64"}
        if isinstance(t, mi.FloatType):
            return {"type": "number", "format": "double"}
        if isinstance(t, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
            return {"type": "array", "items": self.schema(t.item_type)}
        if isinstance(t, mi.DictType):
            return {"type": "object", "additionalProperties": self.schema(t.value_type)}
        if isinstance(t, mi.StructType):
            return self._ref(self._struct(t))
        if isinstance(t, mi.LiteralType):
            return {"type": "string", "enum": list(t.values)}
        if isinstance(t, mi.EnumType):
            return {"type": "string", "enum": [e.value for e in t.cls]}
        # Any / RawExtension: free-form JSON, as Kubernetes' RawExtension is.
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


# ------------------------------------------------------------------ paths


def _gv_path(group: str, version: str) -> str:
    return f"/api/{version}" if not group else f"/apis/{group}/{version}"


def _op_prefix(group: str, version: str) -> str:
    g = "Core" if not group else group.split(".", 1)[0].capitalize()
    return g + version[0].upper() + version[1:]


def _gvk(rt: ResourceType, version: str, kind: str | None = None) -> dict[str, str]:
    return {"group": rt.group, "kind": kind or rt.kind, "version": version}


def _query(name: str, description: str, type_: str = "string") -> dict[str, Any]:
    return {"name": name, "in": "query", "description": description, "schema": {"type": type_, "uniqueItems": True}}


_DRY_RUN = _query(
    "dryRun",
    "When present, indicates that modifications should not be persisted. An invalid or unrecognized "
    "dryRun directive will result in an error response and no further processing of the request. "
    "Valid values are: - All: all dry run stages will be processed",
)
_FIELD_MANAGER = _query(
    "fieldManager",
    "fieldManager is a name associated with the actor or entity that is making these changes. The "
    "value must be less than or 128 characters long, and only contain printable characters, as "
    "defined by https://golang.org/pkg/unicode/#IsPrint.",
)
_FIELD_VALIDATION = _query(
    "fieldValidation",
    "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) "
    "containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown "
    "fields that are silently dropped from the object, and will ignore all but the last duplicate "
    "field that the decoder encounters. - Warn: This will send a warning via the standard warning "
    "response header for each unknown field that is dropped from the object, and for each duplicate "
    "field that is encountered. - Strict: This will fail the request with a BadRequest error if any "
    "unknown fields would be dropped from the object, or if any duplicate fields are present.",
)
_FORCE = _query(
    "force",
    'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields '
    "owned by other people. Force flag must be unset for non-apply patch requests.",
    "boolean",
)
_LIST_PARAMS = [
    _query("allowWatchBookmarks", 'allowWatchBookmarks requests watch events with type "BOOKMARK".', "boolean"),
    _query("continue", "The continue option should be set when retrieving more results from the server."),
    _query(
        "fieldSelector", "A selector to restrict the list of returned objects by their fields. Defaults to everything."
    ),
    _query(
        "labelSelector", "A selector to restrict the list of returned objects by their labels. Defaults to everything."
    ),
    _query("limit", "limit is a maximum number of responses to return for a list call.", "integer"),
    _query(
        "resourceVersion", "resourceVersion sets a constraint on what resource versions a request may be served from."
    ),
    _query("resourceVersionMatch", "resourceVersionMatch determines how resourceVersion is applied to list calls."),
    _query("sendInitialEvents", "`sendInitialEvents=true` may be set together with `watch=true`.", "boolean"),
    _query("timeoutSeconds", "Timeout for the list/watch call.", "integer"),
    _query(
        "watch",
        "Watch for changes to the described resources and return them as a stream of add, update, "
        "and remove notifications.",
        "boolean",
    ),
]
_DELETE_PARAMS = [
    _DRY_RUN,
    _query("gracePeriodSeconds", "The duration in seconds before the object should be deleted.", "integer"),
    _query("orphanDependents", "Deprecated: please use the PropagationPolicy.", "boolean"),
    _query("propagationPolicy", "Whether and how garbage collection will be performed."),
]
_PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)
_RESPONSE_TYPES = ("application/json", "application/yaml")


def _content(ref: str, types: tuple[str, ...] = _RESPONSE_TYPES) -> dict[str, Any]:
    return {t: {"schema": {"$ref": V3_REF + ref}} for t in types}


def _responses(ref: str, *codes: str) -> dict[str, Any]:
    out = {
        c: {"description": {"200": "OK", "201": "Created", "202": "Accepted"}[c], "content": _content(ref)}
        for c in codes
    }
    out["401"] = {"description": "Unauthorized"}
    return out


def _operation(
    action: str,
    op_id: str,
    gvk: dict[str, str],
    *,
    params: list[dict[str, Any]],
    ok: str,
    codes: tuple[str, ...],
    body: str | None = None,
    body_types: tuple[str, ...] = ("*/*",),
    description: str = "",
) -> dict[str, Any]:
    op: dict[str, Any] = {
        "tags": [op_id],
        "description": description or op_id,
        "operationId": op_id,
        "parameters": params,
        "responses": _responses(ok, *codes),
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
    }
    if body:
        op["requestBody"] = {"content": _content(body, body_types), "required": True}
    return op


def resource_paths(rt: ResourceType, version: str) -> dict[str, dict[str, Any]]:
    """Kubernetes' REST paths of one resource, as OpenAPI v3 path items."""
    base = _gv_path(rt.group, version)
    prefix = _op_prefix(rt.group, version)
    kind_name = definition_name(_model(rt, version))
    list_name = _list_name(kind_name, rt)
    gvk = _gvk(rt, version)
    scoped = "Namespaced" if rt.namespaced else ""
    ns_param = (
        [
            {
                "name": "namespace",
                "in": "path",
                "required": True,
                "description": "object name and auth scope, such as for teams and projects",
                "schema": {"type": "string", "uniqueItems": True},
            }
        ]
        if rt.namespaced
        else []
    )
    name_param = {
        "name": "name",
        "in": "path",
        "required": True,
        "description": f"name of the {rt.kind}",
        "schema": {"type": "string", "uniqueItems": True},
    }
    pretty = _query("pretty", "If 'true', then the output is pretty printed.")
    coll = f"{base}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{base}/{rt.plural}"
    item = f"{coll}/{{name}}"
    paths: dict[str, dict[str, Any]] = {}
    collection: dict[str, Any] = {
        "get": _operation(
            "list", f"list{prefix}{scoped}{rt.kind}", gvk, params=_LIST_PARAMS, ok=list_name, codes=("200",)
        ),
        "post": _operation(
            "post",
            f"create{prefix}{scoped}{rt.kind}",
            gvk,
            params=[_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION],
            ok=kind_name,
            codes=("200", "201", "202"),
            body=kind_name,
        ),
        "parameters": [*ns_param, pretty],
    }
    if (rt.group, rt.plural) != ("", "namespaces"):
        collection["delete"] = _operation(
            "deletecollection",
            f"deletecollection{prefix}{scoped}{rt.kind}",
            gvk,
            params=[*_DELETE_PARAMS, *_LIST_PARAMS],
            ok=META + "Status",
            codes=("200",),
            body=META + "DeleteOptions",
        )
    paths[coll] = collection
    paths[item] = {
        "get": _operation("get", f"read{prefix}{scoped}{rt.kind}", gvk, params=[], ok=kind_name, codes=("200",)),
        "put": _operation(
            "put",
            f"replace{prefix}{scoped}{rt.kind}",
            gvk,
            params=[_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION],
            ok=kind_name,
            codes=("200", "201"),
            body=kind_name,
        ),
        "patch": _operation(
            "patch",
            f"patch{prefix}{scoped}{rt.kind}",
            gvk,
            params=[_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION, _FORCE],
            ok=kind_name,
            codes=("200", "201"),
            body=PATCH,
            body_types=_PATCH_TYPES,
        ),
        "delete": _operation(
            "delete",
            f"delete{prefix}{scoped}{rt.kind}",
            gvk,
            params=_DELETE_PARAMS,
            ok=kind_name,
            codes=("200", "202"),
            body=META + "DeleteOptions",
        ),
        "parameters": [name_param, *ns_param, pretty],
    }
    if rt.namespaced:
        paths[f"{base}/{rt.plural}"] = {
            "get": _operation(
                "list", f"list{prefix}{rt.kind}ForAllNamespaces", gvk, params=_LIST_PARAMS, ok=list_name, codes=("200",)
            ),
            "parameters": [pretty],
        }
    if "status" in rt.subresources:
        paths[f"{item}/status"] = {
            "get": _operation(
                "get", f"read{prefix}{scoped}{rt.kind}Status", gvk, params=[], ok=kind_name, codes=("200",)
            ),
            "put": _operation(
                "put",
                f"replace{prefix}{scoped}{rt.kind}Status",
                gvk,
                params=[_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION],
                ok=kind_name,
                codes=("200", "201"),
                body=kind_name,
            ),
            "patch": _operation(
                "patch",
                f"patch{prefix}{scoped}{rt.kind}Status",
                gvk,
                params=[_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION, _FORCE],
                ok=kind_name,
                codes=("200", "201"),
                body=PATCH,
                body_types=_PATCH_TYPES,
            ),
            "parameters": [name_param, *ns_param, pretty],
        }
    if "binding" in rt.subresources:
        binding = definition_name(core_models.Binding)
        paths[f"{item}/binding"] = {
            "post": _operation(
                "post",
                f"create{prefix}{scoped}{rt.kind}Binding",
                {"group": "", "kind": "Binding", "version": "v1"},
                params=[_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION],
                ok=binding,
                codes=("200", "201", "202"),
                body=binding,
            ),
            "parameters": [name_param, *ns_param, pretty],
        }
    return paths


def _model(rt: ResourceType, version: str) -> type:
    model = MODELS.get((rt.group, version, rt.kind))
    if model is None:
        raise LookupError(f"no model for {rt.group}/{version} {rt.kind}")
    return model


def _list_name(kind_name: str, rt: ResourceType) -> str:
    return kind_name.rsplit(".", 1)[0] + "." + (rt.list_kind or rt.kind + "List")


# ------------------------------------------------------------------ documents


def _reachable(roots: list[str], components: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in seen or name not in components:
            continue
        seen[name] = components[name]
        stack.extend(_refs(components[name]))
    return dict(sorted(seen.items()))


def _refs(node: Any) -> list[str]:
    out: list[str] = []
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(V3_REF):
            out.append(ref[len(V3_REF) :])
        for v in node.values():
            out.extend(_refs(v))
    elif isinstance(node, list):
        for v in node:
            out.extend(_refs(v))
    return out


def build_components() -> dict[str, dict[str, Any]]:
    """Every schema the served kinds need, with kinds and lists tagged by GVK."""
    builder = SchemaBuilder()
    for cls in (meta_models.Status, meta_models.DeleteOptions, meta_models.ListMeta, core_models.Binding):
        builder.add(cls)
    builder._ref(PATCH)
    components = builder.components
    gvks: dict[str, list[dict[str, str]]] = {}
    for rt in registry.RESOURCES:
        for version in registry.served_versions(rt.group):
            name = builder.add(_model(rt, version))
            gvks.setdefault(name, []).append(_gvk(rt, version))
            list_name = _list_name(name, rt)
            components[list_name] = {
                "description": f"{rt.list_kind} is a list of {rt.kind} objects.",
                "type": "object",
                "required": ["items"],
                "properties": {
                    "apiVersion": {
                        "type": "string",
                        "description": "APIVersion defines the versioned schema of this representation of an object.",
                    },
                    "items": {"type": "array", "items": {"$ref": V3_REF + name}},
                    "kind": {
                        "type": "string",
                        "description": "Kind is a string value representing the REST resource this object represents.",
                    },
                    "metadata": {"$ref": V3_REF + META + "ListMeta"},
                },
                "x-kubernetes-group-version-kind": [_gvk(rt, version, rt.list_kind)],
            }
    gvks.setdefault(definition_name(core_models.Binding), []).append({"group": "", "kind": "Binding", "version": "v1"})
    for meta_kind in ("Status", "DeleteOptions"):
        gvks.setdefault(META + meta_kind, []).append({"group": "", "kind": meta_kind, "version": "v1"})
    for name, tags in gvks.items():
        components[name] = {**components[name], "x-kubernetes-group-version-kind": tags}
    for schema in components.values():
        props = schema.get("properties") or {}
        if "metadata" in props and "x-kubernetes-group-version-kind" in schema:
            props["metadata"] = {
                "$ref": props["metadata"].get("$ref", V3_REF + META + "ObjectMeta"),
                "description": "Standard object's metadata.",
            }
    return components


_INFO = {"title": "Kubernetes", "version": "v1.31.0-draplane"}
_SECURITY_V3 = {
    "BearerToken": {
        "type": "apiKey",
        "description": "Bearer Token authentication",
        "name": "authorization",
        "in": "header",
    }
}


def v3_document(group: str, version: str, components: dict[str, dict[str, Any]]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for rt in registry.RESOURCES:
        if rt.group == group and version in registry.served_versions(group):
            paths.update(resource_paths(rt, version))
    schemas = _reachable(_refs(paths), components)
    return {
        "openapi": "3.0.0",
        "info": _INFO,
        "paths": paths,
        "components": {"schemas": schemas, "securitySchemes": _SECURITY_V3},
        "security": [{"BearerToken": []}],
    }


def _v2_params(params: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for p in params:
        q = {k: v for k, v in p.items() if k != "schema"}
        schema = p.get("schema") or {}
        q["type"] = schema.get("type", "string")
        if schema.get("uniqueItems"):
            q["uniqueItems"] = True
        out.append(q)
    return out


def v2_document(components: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Swagger 2.0 of everything, derived from the v3 paths and schemas."""
    paths: dict[str, Any] = {}
    for rt in registry.RESOURCES:
        for version in registry.served_versions(rt.group):
            for path, item in resource_paths(rt, version).items():
                v2_item: dict[str, Any] = {}
                for method, op in item.items():
                    if method == "parameters":
                        v2_item["parameters"] = _v2_params(op)
                        continue
                    v2op = {k: v for k, v in op.items() if k not in ("requestBody", "responses", "parameters")}
                    params = _v2_params(op["parameters"])
                    body = op.get("requestBody")
                    if body:
                        content = body["content"]
                        first = next(iter(content.values()))
                        params.insert(0, {"name": "body", "in": "body", "required": True, "schema": first["schema"]})
                        v2op["consumes"] = list(content) if method == "patch" else ["*/*"]
                    v2op["parameters"] = params
                    v2op["produces"] = list(_RESPONSE_TYPES)
                    v2op["schemes"] = ["https"]
                    v2op["responses"] = {
                        code: (
                            {"description": r["description"], "schema": next(iter(r["content"].values()))["schema"]}
                            if "content" in r
                            else r
                        )
                        for code, r in op["responses"].items()
                    }
                    v2_item[method] = v2op
                paths[path] = v2_item
    doc = {
        "swagger": "2.0",
        "info": _INFO,
        "paths": paths,
        "definitions": dict(sorted(components.items())),
        "securityDefinitions": {
            "BearerToken": {
                "type": "apiKey",
                "description": "Bearer Token authentication",
                "name": "authorization",
                "in": "header",
            }
        },
        "security": [{"BearerToken": []}],
    }
    return orjson.loads(orjson.dumps(doc).replace(V3_REF.encode(), V2_REF.encode()))


def gv_key(group: str, version: str) -> str:
    """The index key of a group-version: ``api/v1``, ``apis/resource.k8s.io/v1alpha3``."""
    return f"api/{version}" if not group else f"apis/{group}/{version}"


@dataclass(frozen=True, slots=True)
class OpenAPIDocuments:
    """Every OpenAPI answer, encoded once: v2, the v3 index and each v3 group-version."""

    v2: Document
    v3_index: Document
    v3: dict[str, Document]

    @classmethod
    def build(cls) -> OpenAPIDocuments:
        components = build_components()
        v3: dict[str, Document] = {}
        groups: list[str] = []
        for rt in registry.RESOURCES:
            if rt.group not in groups:
                groups.append(rt.group)
        for group in groups:
            for version in registry.served_versions(group):
                v3[gv_key(group, version)] = Document.of(v3_document(group, version, components))
        index = {
            "paths": {key: {"serverRelativeURL": f"/openapi/v3/{key}?hash={_hash(doc)}"} for key, doc in v3.items()}
        }
        return cls(v2=Document.of(v2_document(components)), v3_index=Document.of(index), v3=v3)


def _hash(doc: Document) -> str:
    return hashlib.sha512(doc.body).hexdigest()[:128].upper()
