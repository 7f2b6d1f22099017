"""OpenAPI v2 and v3 documents, generated from the typed models.

kubectl reads OpenAPI before it writes (see the kubectl 1.32 request notes):

- it looks, in ``/openapi/v3/<group-version>``, for a PATCH operation carrying
  ``x-kubernetes-group-version-kind`` and a ``fieldValidation`` query
  parameter; with it, kubectl sends ``fieldValidation=Strict`` and leaves
  schema checks to the server;
- client-side ``apply`` computes strategic merge patches from the schemas'
  ``x-kubernetes-patch-merge-key`` / ``x-kubernetes-patch-strategy``;
- ``kubectl explain`` prints the schemas.

The shapes come from walking the msgspec models (`services.api.types`) with
``msgspec.inspect``, so they are exactly what the server decodes: struct →
object with properties, ``Int32`` → integer int32, ``Time`` → date-time,
Quantity / IntOrString → Kubernetes' shared definitions. Everything else a
definition says — descriptions (``kubectl explain``), required fields, the
patch-strategy, list-type and map-type markers (``+patchStrategy=merge``,
``+listType=map``...) and group-version-kinds — is read from Kubernetes' own
schemas of the model's release (`services.api.types.schemas`). Documents are
built once and served as bytes with an ETag.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

from services.api.types import MODELS, registry, release_of
from services.api.types import core_v1 as core_models
from services.api.types import definition_of as types_definition_of
from services.api.types import meta as meta_models
from services.api.types.registry import ResourceType
from services.api.types.schemas import Definition, Property, schemas
from services.api.types.served import DEFAULT_SERVED, ServedVersions
from services.apiserver import reviews
from services.apiserver.discovery import Document

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
TIME = META + "Time"
MICRO_TIME = META + "MicroTime"
PATCH = META + "Patch"
V3_REF = "#/components/schemas/"
V2_REF = "#/definitions/"

_MARKERS = (
    ("x-kubernetes-patch-strategy", "patch_strategy"),
    ("x-kubernetes-patch-merge-key", "patch_merge_key"),
    ("x-kubernetes-list-type", "list_type"),
    ("x-kubernetes-list-map-keys", "list_map_keys"),
    ("x-kubernetes-map-type", "map_type"),
)

# Kubernetes' shared scalar definitions, in the shape its OpenAPI documents give them (the published
# JSON schemas write Quantity and IntOrString as oneOf); descriptions come from the schemas.
_SHARED_SHAPES: dict[str, dict[str, Any]] = {
    QUANTITY: {"type": "string"},
    INT_OR_STRING: {"type": "string", "format": "int-or-string"},
    TIME: {"type": "string", "format": "date-time"},
    MICRO_TIME: {"type": "string", "format": "date-time"},
    PATCH: {"type": "object"},
}


def _shared(name: str) -> dict[str, Any]:
    defs = schemas(_SHARED_RELEASE)
    description = defs.get(name).description if name in defs else ""
    return {**({"description": description} if description else {}), **_SHARED_SHAPES[name]}


_SHARED_RELEASE = "1.31"


def property_markers(prop: Property) -> dict[str, Any]:
    """The ``x-kubernetes-*`` markers of one property, as Kubernetes' OpenAPI documents carry them."""
    out: dict[str, Any] = {}
    for key, attr in _MARKERS:
        value = getattr(prop, attr)
        if value:
            out[key] = list(value) if isinstance(value, tuple) else value
    return out


def _described(prop: dict[str, Any], description: str) -> dict[str, Any]:
    """A property with its description; a reference is wrapped in ``allOf``, as Kubernetes' v3 documents do
    (kubectl explain follows a bare ``$ref`` and would print the referenced type's description instead)."""
    if "$ref" in prop:
        return {
            "allOf": [{"$ref": prop["$ref"]}],
            **{k: v for k, v in prop.items() if k != "$ref"},
            "description": description,
        }
    return {**prop, "description": description}


def _v2_refs(node: Any) -> Any:
    """Swagger 2.0 spells a described reference as ``$ref`` with siblings (Kubernetes' v2 document does)."""
    if isinstance(node, dict):
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict) and "$ref" in all_of[0]:
            return {"$ref": all_of[0]["$ref"], **{k: _v2_refs(v) for k, v in node.items() if k != "allOf"}}
        return {k: _v2_refs(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_v2_refs(v) for v in node]
    return node


def definition_name(cls: type) -> str:
    name = types_definition_of(cls)
    return name if name is not None else "io.draplane." + cls.__module__.rsplit(".", 1)[-1] + "." + cls.__name__


def _definition(cls: type) -> Definition | None:
    name = types_definition_of(cls)
    release = release_of(cls)
    if name is None or release is None or name not in schemas(release):
        return None
    return schemas(release).get(name)


class SchemaBuilder:
    """Walks msgspec types into Kubernetes-shaped OpenAPI schemas (v3 refs)."""

    def __init__(self) -> None:
        self.components: dict[str, dict[str, Any]] = {}

    def add(self, cls: type) -> str:
        info = msgspec.inspect.type_info(cls)
        return self._struct(info)

    def _ref(self, name: str) -> dict[str, Any]:
        if name in _SHARED_SHAPES and name not in self.components:
            self.components[name] = _shared(name)
        return {"$ref": V3_REF + name}

    def _struct(self, info: Any) -> str:
        cls = info.cls
        name = definition_name(cls)
        if name in self.components:
            return name
        schema: dict[str, Any] = {"type": "object"}
        self.components[name] = schema  # placed first so recursion terminates
        definition = _definition(cls)
        if definition is not None and definition.description:
            schema["description"] = definition.description
        props: dict[str, Any] = {}
        for f in info.fields:
            prop = self.schema(f.type)
            known = definition.properties.get(f.encode_name) if definition is not None else None
            if known is not None:
                if known.description:
                    prop = _described(prop, known.description)
                prop = {**prop, **property_markers(known)}
            props[f.encode_name] = prop
        schema["properties"] = props
        if definition is not None:
            required = [r for r in definition.required if r in props]
            if required:
                schema["required"] = required
            if definition.map_type:
                schema["x-kubernetes-map-type"] = definition.map_type
            if definition.gvks:
                schema["x-kubernetes-group-version-kind"] = [
                    {"group": g.group, "kind": g.kind, "version": g.version} for g in definition.gvks
                ]
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
    if "finalize" in rt.subresources:
        paths[f"{item}/finalize"] = {
            "put": _operation(
                "put",
                f"replace{prefix}{scoped}{rt.kind}Finalize",
                gvk,
                params=[_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION],
                ok=kind_name,
                codes=("200", "201"),
                body=kind_name,
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


def review_paths(rt: ResourceType, version: str) -> dict[str, dict[str, Any]]:
    """The one path of a review kind (`services.apiserver.reviews`): POST to the collection, as Kubernetes has it."""
    kind_name = definition_name(_model(rt, version))
    return {
        f"{_gv_path(rt.group, version)}/{rt.plural}": {
            "post": _operation(
                "post",
                f"create{_op_prefix(rt.group, version)}{rt.kind}",
                _gvk(rt, version),
                params=[_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION],
                ok=kind_name,
                codes=("200", "201", "202"),
                body=kind_name,
            ),
            "parameters": [_query("pretty", "If 'true', then the output is pretty printed.")],
        }
    }


def _served_paths(served: ServedVersions = DEFAULT_SERVED) -> list[tuple[str, str, dict[str, dict[str, Any]]]]:
    """(group, version, paths) of every served resource (in each version it is served in) and review kind."""
    out = [
        (rt.group, version, resource_paths(rt, version))
        for rt in registry.RESOURCES
        for version in rt.versions
        if served.serves_kind(rt, version)
    ]
    out.extend(
        (rt.group, version, review_paths(rt, version))
        for rt in reviews.RESOURCES
        for version in reviews.GROUP_VERSIONS[rt.group]
    )
    return out


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


def _list_component(rt: ResourceType, version: str, item: str) -> dict[str, Any]:
    """The schema of a kind's list: Kubernetes' own definition of it, with ``items`` pointing at the kind."""
    name = _list_name(item, rt)
    release = release_of(_model(rt, version))
    defs = schemas(release) if release is not None else None
    definition = defs.get(name) if defs is not None and name in defs else None

    def described(prop: str, schema: dict[str, Any]) -> dict[str, Any]:
        known = definition.properties.get(prop) if definition is not None else None
        return _described(schema, known.description) if known is not None and known.description else schema

    return {
        "description": definition.description if definition else f"{rt.list_kind} is a list of {rt.kind} objects.",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": described("apiVersion", {"type": "string"}),
            "items": described("items", {"type": "array", "items": {"$ref": V3_REF + item}}),
            "kind": described("kind", {"type": "string"}),
            "metadata": described("metadata", {"$ref": V3_REF + META + "ListMeta"}),
        },
        "x-kubernetes-group-version-kind": [_gvk(rt, version, rt.list_kind)],
    }


def build_components(served: ServedVersions = DEFAULT_SERVED) -> dict[str, dict[str, Any]]:
    """Every schema the served kinds need, with kinds and lists tagged by GVK."""
    builder = SchemaBuilder()
    for cls in (meta_models.Status, meta_models.DeleteOptions, meta_models.ListMeta, core_models.Binding):
        builder.add(cls)
    builder._ref(PATCH)
    components = builder.components
    for rt in registry.RESOURCES:
        for version in rt.versions:
            if not served.serves_kind(rt, version):
                continue
            name = builder.add(_model(rt, version))
            components[_list_name(name, rt)] = _list_component(rt, version, name)
            # A kind Kubernetes' schemas do not know (none today) is tagged from the registry.
            components[name].setdefault("x-kubernetes-group-version-kind", [_gvk(rt, version)])
    for rt in reviews.RESOURCES:
        for version in reviews.GROUP_VERSIONS[rt.group]:
            name = builder.add(_model(rt, version))
            components[name].setdefault("x-kubernetes-group-version-kind", [_gvk(rt, version)])
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


def v3_document(
    group: str, version: str, components: dict[str, dict[str, Any]], served: ServedVersions = DEFAULT_SERVED
) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for g, v, found in _served_paths(served):
        if (g, v) == (group, version):
            paths.update(found)
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


def v2_document(components: dict[str, dict[str, Any]], served: ServedVersions = DEFAULT_SERVED) -> dict[str, Any]:
    """Swagger 2.0 of everything served, derived from the v3 paths and schemas."""
    paths: dict[str, Any] = {}
    for _group, _version, found in _served_paths(served):
        for path, item in found.items():
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
        "definitions": _v2_refs(dict(sorted(components.items()))),
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
    """Every OpenAPI answer, encoded once: v2, the v3 index and each v3 group-version (with the hash the
    index puts in its URL)."""

    v2: Document
    v3_index: Document
    v3: dict[str, Document]
    v3_hashes: dict[str, str]

    @classmethod
    def build(cls, served: ServedVersions = DEFAULT_SERVED) -> OpenAPIDocuments:
        components = build_components(served)
        v3: dict[str, Document] = {}
        for group, version, _paths in _served_paths(served):
            key = gv_key(group, version)
            if key not in v3:
                v3[key] = Document.of(v3_document(group, version, components, served))
        hashes = {key: _hash(doc) for key, doc in v3.items()}
        index = {"paths": {key: {"serverRelativeURL": f"/openapi/v3/{key}?hash={hashes[key]}"} for key in v3}}
        return cls(
            v2=Document.of(v2_document(components, served)), v3_index=Document.of(index), v3=v3, v3_hashes=hashes
        )


def _hash(doc: Document) -> str:
    return hashlib.sha512(doc.body).hexdigest()[:128].upper()
