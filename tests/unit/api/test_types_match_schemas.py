"""The models, the patch metadata and the OpenAPI list markers say what Kubernetes' own schemas say.

The schemas are Kubernetes 1.31's OpenAPI definitions as the
``kubernetes-validate`` package ships them (`services.api.types.schemas`).
Each test walks every type a served kind reaches and lists every difference,
so a failure names all of them at once.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.api.machinery.patch import patch_meta
from services.api.types import ALL_MODELS, GO_PACKAGES, MODELS, K8sStruct, backported_fields, release_of
from services.api.types import definition_of as types_definition_of
from services.api.types.registry import INTERNAL
from services.api.types.schema import ListNode, MapNode, Node, ScalarNode, StructNode, struct_node
from services.api.types.schemas import Definition, Schemas, TypeRef, go_name, go_package, schemas
from services.apiserver import openapi


def definition_of(cls: type[K8sStruct]) -> str:
    name = types_definition_of(cls)
    assert name is not None, cls
    return name


def _expected_scalar(defs: Schemas, tp: TypeRef) -> str:
    if tp.kind == "ref":
        return defs.get(tp.ref).scalar or f"struct {tp.ref}"
    if tp.kind == "integer":
        return "int32" if tp.format == "int32" else "int64"
    return {"string": "string", "boolean": "bool", "number": "float", "object": "any"}.get(tp.kind, tp.kind)


def _model_shape(node: Node) -> str:
    if isinstance(node, ScalarNode):
        return node.kind
    if isinstance(node, ListNode):
        return f"[]{_model_shape(node.item)}"
    if isinstance(node, MapNode):
        return f"map[{_model_shape(node.value)}]"
    return f"struct {definition_of(node.cls)}"


def _schema_shape(defs: Schemas, tp: TypeRef) -> str:
    if tp.kind == "array":
        assert tp.item is not None
        return f"[]{_schema_shape(defs, tp.item)}"
    if tp.kind == "map":
        assert tp.item is not None
        return f"map[{_schema_shape(defs, tp.item)}]"
    return _expected_scalar(defs, tp)


def model_differences(roots: list[type[K8sStruct]]) -> list[str]:
    """Every field of every struct reachable from ``roots`` whose presence or JSON type differs from the schemas
    of the release each struct was generated from."""
    out: list[str] = []
    seen: set[type] = set()
    stack = list(roots)
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        name = definition_of(cls)
        definition = schemas(release_of(cls) or "").get(name)  # a 1.37 model may reach a type generated from 1.31
        model = struct_node(cls).fields
        # A field backported from a later release is compared with that release's schemas.
        later = {w: schemas(r).get(name).properties[w] for w, r in backported_fields(cls).items()}
        properties = {**definition.properties, **later}
        for wire in sorted(set(model) | set(properties)):
            if wire not in properties:
                out.append(f"{name}.{wire}: in the model, not in Kubernetes")
                continue
            if wire not in model:
                out.append(f"{name}.{wire}: in Kubernetes, missing from the model")
                continue
            have = _model_shape(model[wire].node)
            release = backported_fields(cls).get(wire) or release_of(cls) or ""
            want = _schema_shape(schemas(release), properties[wire].type)
            if have != want:
                out.append(f"{name}.{wire}: model {have}, Kubernetes {want}")
            stack.extend(_structs(model[wire].node))
    return sorted(out)


def _structs(node: Node) -> Iterator[type[K8sStruct]]:
    if isinstance(node, StructNode):
        yield node.cls
    elif isinstance(node, ListNode):
        yield from _structs(node.item)
    elif isinstance(node, MapNode):
        yield from _structs(node.value)


_VERSIONS_1_37 = {("resource.k8s.io", v) for v in ("v1", "v1beta2", "v1beta1")}


def test_models_have_exactly_the_fields_and_types_of_kubernetes_1_31() -> None:
    models = sorted(
        {cls for (group, v, _), cls in MODELS.items() if (group, v) not in _VERSIONS_1_37 and v != INTERNAL},
        key=lambda c: c.__name__,
    )
    assert {release_of(cls) for cls in models} == {"1.31"}
    assert model_differences(models) == []


@pytest.mark.parametrize("version", ["v1", "v1beta2", "v1beta1"])
def test_resource_models_have_exactly_the_fields_and_types_of_kubernetes_1_37(version: str) -> None:
    models = [cls for (group, v, _), cls in ALL_MODELS.items() if (group, v) == ("resource.k8s.io", version)]
    assert {release_of(cls) for cls in models} == {"1.37"}
    kinds = {cls.__name__ for cls in models}
    assert {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"} <= kinds
    assert model_differences(models) == []
    for cls in models:
        assert schemas("1.37").get(definition_of(cls)).gvks[0].version == version


def test_go_names_and_packages_are_the_schemas() -> None:
    # The hub models (`INTERNAL`) are never on the wire; tests/unit/api/test_hub_storage.py holds them.
    for cls in {cls for (_, v, _), cls in ALL_MODELS.items() if v != INTERNAL}:
        name = definition_of(cls)
        assert cls.__name__ == go_name(name)
        assert GO_PACKAGES[cls.__module__] == go_package(name)


# ---------------------------------------------------------------- patch metadata


def _field_meta(defs: Schemas, prop_markers: Definition | None, wire: str, tp: TypeRef) -> patch_meta.FieldMeta:
    prop = prop_markers.properties[wire] if prop_markers is not None else None
    atomic = False
    if tp.kind == "ref":
        atomic = defs.get(tp.ref).map_type == "atomic"
    elif tp.kind == "map" and prop is not None:
        atomic = prop.map_type == "atomic"
    if prop is None:
        return patch_meta.FieldMeta(atomic=atomic)
    is_list = tp.kind == "array"
    return patch_meta.FieldMeta(
        patch_strategies=tuple(s for s in prop.patch_strategy.split(",") if s),
        patch_merge_key=prop.patch_merge_key,
        list_type=(prop.list_type or patch_meta.LIST_ATOMIC) if is_list else patch_meta.LIST_ATOMIC,
        list_map_keys=prop.list_map_keys if is_list else (),
        atomic=atomic,
    )


def schema_patch_meta(defs: Schemas, definition: str) -> dict[str, patch_meta.FieldMeta]:
    """Path → the markers Kubernetes' schema declares, for every path of the kind (list items as ``[]``)."""
    out: dict[str, patch_meta.FieldMeta] = {}

    def visit(name: str, path: str, seen: tuple[str, ...]) -> None:
        if name in seen:
            return
        d = defs.get(name)
        for wire, prop in d.properties.items():
            child = f"{path}.{wire}" if path else wire
            out[child] = _field_meta(defs, d, wire, prop.type)
            tp, here = prop.type, child
            while tp.kind == "array":
                assert tp.item is not None
                tp, here = tp.item, here + "[]"
                atomic = tp.kind == "ref" and defs.get(tp.ref).map_type == "atomic"
                out[here] = patch_meta.ATOMIC if atomic else patch_meta.DEFAULT
            if tp.kind == "ref" and not defs.get(tp.ref).scalar:
                visit(tp.ref, here, (*seen, name))

    visit(definition, "", ())
    return out


def _without_key_defaults(meta: patch_meta.FieldMeta) -> patch_meta.FieldMeta:
    return patch_meta.FieldMeta(
        meta.patch_strategies, meta.patch_merge_key, meta.list_type, meta.list_map_keys, (), meta.atomic
    )


def patch_meta_differences(defs: Schemas) -> list[str]:
    """Differences for every kind of ``defs``' release that patch_meta has."""
    out: list[str] = []
    for api_version, kind in patch_meta.kinds():
        group, _, version = api_version.rpartition("/")
        if ((group, version) in _VERSIONS_1_37) != (defs.release == "1.37"):
            continue
        want = schema_patch_meta(defs, defs.kind(group, version, kind).name)
        schema = patch_meta.schema_for(api_version, kind)
        assert schema is not None
        for path in sorted(want):
            have = _without_key_defaults(schema.meta(path))
            if have != want[path]:
                out.append(f"{kind} {path}: patch_meta {have}, Kubernetes {want[path]}")
    return out


def test_patch_metadata_is_kubernetes_1_31s() -> None:
    assert patch_meta_differences(schemas("1.31")) == []


def test_patch_metadata_of_the_1_37_versions_is_kubernetes_1_37s() -> None:
    assert patch_meta_differences(schemas("1.37")) == []


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        # Found by the cross-check: the hand-written tables had these as granular. In Kubernetes 1.31,
        # LabelSelector, NodeSelectorTerm, LocalObjectReference, ObjectFieldSelector and
        # ResourceFieldSelector are +structType=atomic (k8s.io/apimachinery meta/v1 types.go,
        # k8s.io/api core/v1 types.go), so apply owns and replaces them whole.
        ("Pod", "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[].labelSelector"),
        ("Pod", "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[].namespaceSelector"),
        ("Pod", "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[].preference"),
        ("Pod", "spec.volumes[].csi.nodePublishSecretRef"),
        ("Pod", "spec.volumes[].downwardAPI.items[].fieldRef"),
        ("ResourceSlice", "spec.nodeSelector.nodeSelectorTerms[]"),
        ("DeviceClass", "spec.suitableNodes.nodeSelectorTerms[]"),
    ],
)
def test_atomic_structs_the_hand_written_tables_missed(kind: str, path: str) -> None:
    api_version = "v1" if kind == "Pod" else "resource.k8s.io/v1alpha3"
    schema = patch_meta.schema_for(api_version, kind)
    assert schema is not None and schema.meta(path).atomic


def test_map_list_keys_keep_their_hand_written_defaults() -> None:
    schema = patch_meta.schema_for("v1", "Pod")
    assert schema is not None
    ports = schema.meta("spec.containers[].ports")
    assert ports.list_map_keys == ("containerPort", "protocol")
    assert ports.key_defaults == (("protocol", "TCP"),)
    assert schema.meta("spec.volumes").patch_strategies == ("merge", "retainKeys")
    assert schema.meta("spec.nodeSelector").atomic  # +mapType=atomic on the field
    assert schema.meta("spec.containers[].env[].valueFrom.fieldRef").atomic


# ---------------------------------------------------------------- OpenAPI documents


_MARKERS = (
    "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
)


def openapi_differences(defs: Schemas) -> list[str]:
    """Every description and marker of the served OpenAPI components that differs from Kubernetes' schemas."""
    out: list[str] = []
    components = openapi.build_components()
    for name, component in sorted(components.items()):
        if name not in defs or defs.get(name).scalar:
            continue
        definition = defs.get(name)
        if component.get("description", "") != definition.description:
            out.append(f"{name}: description differs")
        for wire, prop in definition.properties.items():
            served = component["properties"].get(wire)
            if served is None:
                if not name.endswith("List"):
                    out.append(f"{name}.{wire}: not served")
                continue
            want: dict[str, object] = {}
            for key, value in zip(
                _MARKERS,
                (prop.patch_strategy, prop.patch_merge_key, prop.list_type, list(prop.list_map_keys), prop.map_type),
                strict=True,
            ):
                if value:
                    want[key] = value
            have = {key: served[key] for key in _MARKERS if key in served}
            if have != want:
                out.append(f"{name}.{wire}: openapi {have}, Kubernetes {want}")
            if served.get("description", "") != prop.description:
                out.append(f"{name}.{wire}: description differs")
        gvks = [{"group": g.group, "kind": g.kind, "version": g.version} for g in definition.gvks]
        if gvks and component.get("x-kubernetes-group-version-kind") != gvks and not name.endswith("List"):
            out.append(f"{name}: GVKs {component.get('x-kubernetes-group-version-kind')}, Kubernetes {gvks}")
    return out


def test_openapi_descriptions_markers_and_gvks_are_kubernetes_1_31s() -> None:
    assert openapi_differences(schemas("1.31")) == []


def test_every_served_definition_has_a_description() -> None:
    components = openapi.build_components()
    claim_spec = components["io.k8s.api.resource.v1alpha3.ResourceClaimSpec"]
    assert claim_spec["properties"]["devices"]["description"] == "Devices defines how to request devices."
    requests = components["io.k8s.api.resource.v1alpha3.DeviceClaim"]["properties"]["requests"]
    assert requests["x-kubernetes-list-type"] == "atomic"
    assert components["io.k8s.api.core.v1.NodeSelector"]["x-kubernetes-map-type"] == "atomic"
    # Quantity and IntOrString lose theirs in kubernetes-validate's oneOf rewriting; GRPCAction,
    # TypedObjectReference and ResourceStatus have no Go doc comment in Kubernetes 1.31.
    undescribed = {name.rsplit(".", 1)[1] for name, c in components.items() if not c.get("description")}
    # PortStatus (Service and Pod status) has no description in Kubernetes' schema either.
    assert undescribed == {
        "Quantity",
        "IntOrString",
        "GRPCAction",
        "TypedObjectReference",
        "ResourceStatus",
        "PortStatus",
    }
