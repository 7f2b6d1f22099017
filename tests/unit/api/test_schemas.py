"""The schema loader reads Kubernetes' definitions from kubernetes-validate and answers with their facts."""

from __future__ import annotations

import pytest

from services.api.types.schemas import GroupVersionKind, TypeRef, go_name, go_package, schemas


def test_a_release_is_read_once() -> None:
    assert schemas("1.31") is schemas("1.31")
    with pytest.raises(ValueError, match=r"1\.31, 1\.37"):
        schemas("1.30")


@pytest.mark.parametrize(
    ("release", "definition", "field", "type_"),
    [
        ("1.31", "io.k8s.api.resource.v1alpha3.DeviceRequest", "count", TypeRef("integer", format="int64")),
        ("1.31", "io.k8s.api.core.v1.ContainerPort", "containerPort", TypeRef("integer", format="int32")),
        (
            "1.31",
            "io.k8s.api.core.v1.PodSpec",
            "containers",
            TypeRef("array", item=TypeRef("ref", ref="io.k8s.api.core.v1.Container")),
        ),
        ("1.31", "io.k8s.api.core.v1.PodSpec", "nodeSelector", TypeRef("map", item=TypeRef("string"))),
        (
            "1.37",
            "io.k8s.api.resource.v1.DeviceRequest",
            "exactly",
            TypeRef("ref", ref="io.k8s.api.resource.v1.ExactDeviceRequest"),
        ),
    ],
)
def test_field_types(release: str, definition: str, field: str, type_: TypeRef) -> None:
    assert schemas(release).get(definition).properties[field].type == type_


def test_markers_descriptions_and_kinds() -> None:
    defs = schemas("1.31")
    ports = defs.get("io.k8s.api.core.v1.Container").properties["ports"]
    assert (ports.list_type, ports.list_map_keys) == ("map", ("containerPort", "protocol"))
    assert (ports.patch_strategy, ports.patch_merge_key) == ("merge", "containerPort")
    volumes = defs.get("io.k8s.api.core.v1.PodSpec").properties["volumes"]
    assert volumes.patch_strategy == "merge,retainKeys"
    assert defs.get("io.k8s.api.core.v1.NodeSelector").map_type == "atomic"
    claim = defs.kind("resource.k8s.io", "v1alpha3", "ResourceClaim")
    assert claim.name == "io.k8s.api.resource.v1alpha3.ResourceClaim"
    assert claim.gvks == (GroupVersionKind("resource.k8s.io", "v1alpha3", "ResourceClaim"),)
    assert claim.description.startswith("ResourceClaim describes a request for access to resources")
    assert defs.kind("", "v1", "Pod").name == "io.k8s.api.core.v1.Pod"
    assert defs.kind("", "v1", "Status").name == "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
    assert defs.get("io.k8s.apimachinery.pkg.api.resource.Quantity").scalar == "quantity"
    with pytest.raises(KeyError):
        defs.kind("resource.k8s.io", "v1", "ResourceClaim")  # 1.31 has no resource.k8s.io/v1
    assert schemas("1.37").kind("resource.k8s.io", "v1", "ResourceClaim").go_package == "v1"


def test_go_names_and_closure() -> None:
    assert go_name("io.k8s.api.resource.v1alpha3.DeviceRequest") == "DeviceRequest"
    assert go_package("io.k8s.api.resource.v1alpha3.DeviceRequest") == "v1alpha3"
    closure = schemas("1.31").closure(["io.k8s.api.resource.v1alpha3.ResourceSlice"])
    assert closure[0] == "io.k8s.api.resource.v1alpha3.ResourceSlice"
    assert "io.k8s.api.core.v1.NodeSelectorRequirement" in closure
    assert "io.k8s.apimachinery.pkg.api.resource.Quantity" in closure
    assert len(closure) == len(set(closure))
