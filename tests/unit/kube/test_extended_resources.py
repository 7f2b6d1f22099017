"""Extended resources backed by DRA: names, the class resolver and the claim's requests and mappings.

The tables mirror kube 1.37's pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources_test.go
(Test_createRequestsAndMappings_requests and _mappings), case by case and by name. Their pods come from the
scheduler's test wrappers: ``Res`` adds container ``con<i>`` (requests = limits), ``InitReq`` init container
``init-con<i>``, ``SidecarReq`` init container ``sidecar-con<i>`` with restartPolicy Always.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.kube.extended_resources import (
    RESOURCE_DEVICE_CLASS_PREFIX,
    DeviceRequest,
    ExtendedResourceClasses,
    RequestMapping,
    is_dra_extended_resource_name,
    is_extended_resource_name,
    mapped_resources,
    requests_and_mappings,
)

EXT = "example.com/gpu"  # upstream's extendedResourceName
IMPLICIT = RESOURCE_DEVICE_CLASS_PREFIX + "classInit"


class PodBuilder:
    """st.MakePod()'s Res / InitReq / SidecarReq."""

    def __init__(self) -> None:
        self.containers: list[dict[str, Any]] = []
        self.init: list[dict[str, Any]] = []

    def res(self, resources: dict[str, str]) -> PodBuilder:
        self.containers.append(
            {"name": f"con{len(self.containers)}", "resources": {"requests": resources, "limits": resources}}
        )
        return self

    def init_req(self, resources: dict[str, str]) -> PodBuilder:
        self.init.append(
            {"name": f"init-con{len(self.init)}", "resources": {"requests": resources, "limits": resources}}
        )
        return self

    def sidecar_req(self, resources: dict[str, str]) -> PodBuilder:
        self.init.append(
            {
                "name": f"sidecar-con{len(self.init)}",
                "restartPolicy": "Always",
                "resources": {"requests": resources, "limits": resources},
            }
        )
        return self

    def obj(self) -> dict[str, Any]:
        return {
            "metadata": {"name": "pod", "namespace": "default", "uid": "1234"},
            "spec": {"initContainers": self.init, "containers": self.containers},
        }


def make_pod() -> PodBuilder:
    return PodBuilder()


def device_class(name: str, extended: str | None = None, created: str = "2026-01-01T00:00:00Z") -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if extended is not None:
        spec["extendedResourceName"] = extended
    return {"metadata": {"name": name, "creationTimestamp": created}, "spec": spec}


class Mapping:
    """upstream's mockDeviceClassResolver: resource name -> class, nothing else."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self._mapping = {resource: device_class(name) for resource, name in mapping.items()}

    def get(self, name: str) -> dict[str, Any] | None:
        return self._mapping.get(name)

    def __bool__(self) -> bool:
        return bool(self._mapping)


POD1 = make_pod().res({EXT: "1", EXT + "1": "2"}).obj()
POD2 = make_pod().res({EXT: "1"}).res({EXT + "1": "2"}).obj()
POD_INIT = make_pod().res({EXT: "1"}).init_req({EXT + "init": "2"}).obj()
POD_INIT2 = make_pod().res({EXT: "1"}).init_req({EXT + "init": "1"}).init_req({EXT + "init": "2"}).obj()
POD_INIT3 = (
    make_pod()
    .res({EXT: "1"})
    .init_req({EXT + "init": "1"})
    .sidecar_req({EXT + "init": "1"})
    .init_req({EXT + "init": "2"})
    .obj()
)
POD1_INIT_IMPLICIT = make_pod().init_req({EXT + "init": "1", IMPLICIT: "2"}).obj()
POD_INIT_IMPLICIT = make_pod().res({EXT: "1"}).init_req({EXT + "init": "1"}).init_req({IMPLICIT: "2"}).obj()

RES = {EXT: 1}
RES2 = {EXT: 1, EXT + "1": 2}
RES_INIT = {EXT: 1, EXT + "init": 2}
RES_INIT_IMPLICIT = {EXT: 1, EXT + "init": 2, IMPLICIT: 2}
DEV_MAP = {EXT: "class"}
DEV_MAP2 = {EXT: "class", EXT + "1": "class1"}
DEV_MAP_INIT = {EXT: "class", EXT + "init": "classInit"}
DEV_MAP_INIT_IMPLICIT = {EXT: "class", EXT + "init": "classInit", IMPLICIT: "classInit"}

REQUEST_CASES: dict[str, tuple[dict[str, Any], dict[str, int], dict[str, str], list[DeviceRequest]]] = {
    "nil": (POD1, {}, {}, []),
    "one resource match": (POD1, RES, DEV_MAP, [DeviceRequest("container-0-request-0", "class", 1)]),
    "one resource match, one resource not match": (
        POD1,
        RES2,
        DEV_MAP,
        [DeviceRequest("container-0-request-0", "class", 1)],
    ),
    "two resources match": (
        POD1,
        RES2,
        DEV_MAP2,
        [DeviceRequest("container-0-request-0", "class", 1), DeviceRequest("container-0-request-1", "class1", 2)],
    ),
    "two containers match": (
        POD2,
        RES2,
        DEV_MAP2,
        [DeviceRequest("container-0-request-0", "class", 1), DeviceRequest("container-1-request-0", "class1", 2)],
    ),
    "one init container, one regular container": (
        POD_INIT,
        RES_INIT,
        DEV_MAP_INIT,
        [DeviceRequest("container-0-request-0", "classInit", 2), DeviceRequest("container-1-request-0", "class", 1)],
    ),
    "two init containers, one regular container": (
        POD_INIT2,
        RES_INIT,
        DEV_MAP_INIT,
        [DeviceRequest("container-1-request-0", "classInit", 2), DeviceRequest("container-2-request-0", "class", 1)],
    ),
    "three init containers, one sidecar, one regular container": (
        POD_INIT3,
        RES_INIT,
        DEV_MAP_INIT,
        [
            DeviceRequest("container-1-request-0", "classInit", 1),
            DeviceRequest("container-2-request-0", "classInit", 2),
            DeviceRequest("container-3-request-0", "class", 1),
        ],
    ),
}


@pytest.mark.parametrize("case", REQUEST_CASES, ids=list(REQUEST_CASES))
def test_create_requests_and_mappings_requests(case: str) -> None:
    pod, resources, mapping, want = REQUEST_CASES[case]
    got, _ = requests_and_mappings(pod, resources, Mapping(mapping))  # type: ignore[arg-type]
    assert got == want


def cer(container: str, resource: str, request: str) -> RequestMapping:
    return RequestMapping(container, resource, request)


MAPPING_CASES: dict[str, tuple[dict[str, Any], dict[str, int], dict[str, str], list[RequestMapping]]] = {
    "one container, two requests": (
        POD1,
        RES2,
        DEV_MAP2,
        [cer("con0", EXT, "container-0-request-0"), cer("con0", EXT + "1", "container-0-request-1")],
    ),
    "one container, one explicit and one implicit request": (
        POD1_INIT_IMPLICIT,
        RES_INIT_IMPLICIT,
        DEV_MAP_INIT_IMPLICIT,
        [cer("init-con0", IMPLICIT, "container-0-request-0"), cer("init-con0", EXT + "init", "container-0-request-1")],
    ),
    "two containers, two requests": (
        POD2,
        RES2,
        DEV_MAP2,
        [cer("con0", EXT, "container-0-request-0"), cer("con1", EXT + "1", "container-1-request-0")],
    ),
    "one init container, one regular container, one request": (
        POD_INIT,
        RES_INIT,
        DEV_MAP_INIT,
        [cer("init-con0", EXT + "init", "container-0-request-0"), cer("con0", EXT, "container-1-request-0")],
    ),
    "three containers (two are init container), two requests": (
        POD_INIT2,
        RES_INIT,
        DEV_MAP_INIT,
        [
            cer("init-con0", EXT + "init", "container-1-request-0"),
            cer("init-con1", EXT + "init", "container-1-request-0"),
            cer("con0", EXT, "container-2-request-0"),
        ],
    ),
    "three containers (two are init container), both explicit and implicit resources": (
        POD_INIT_IMPLICIT,
        RES_INIT_IMPLICIT,
        DEV_MAP_INIT_IMPLICIT,
        [
            cer("init-con0", EXT + "init", "container-0-request-0"),
            cer("init-con1", IMPLICIT, "container-1-request-0"),
            cer("con0", EXT, "container-2-request-0"),
        ],
    ),
    "four containers (two are init container, one sidecar), three requests": (
        POD_INIT3,
        RES_INIT,
        DEV_MAP_INIT,
        [
            cer("init-con0", EXT + "init", "container-1-request-0"),
            cer("sidecar-con1", EXT + "init", "container-1-request-0"),
            cer("init-con2", EXT + "init", "container-2-request-0"),
            cer("con0", EXT, "container-3-request-0"),
        ],
    ),
}


@pytest.mark.parametrize("case", MAPPING_CASES, ids=list(MAPPING_CASES))
def test_create_requests_and_mappings_mappings(case: str) -> None:
    pod, resources, mapping, want = MAPPING_CASES[case]
    _, got = requests_and_mappings(pod, resources, Mapping(mapping))  # type: ignore[arg-type]
    # upstream sorts by request name, then container name, before comparing
    assert sorted(got, key=lambda m: (m.request_name, m.container_name)) == want


def test_requests_wire_in_storage_layout() -> None:
    requests, mappings = requests_and_mappings(POD1, {EXT: 1}, ExtendedResourceClasses([device_class("gpu", EXT)]))
    assert [r.wire() for r in requests] == [
        {"name": "container-0-request-0", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
    ]
    assert [m.wire() for m in mappings] == [
        {"containerName": "con0", "resourceName": EXT, "requestName": "container-0-request-0"}
    ]


@pytest.mark.parametrize(
    ("name", "extended", "dra"),
    [
        ("example.com/gpu", True, True),
        ("cpu", False, False),
        ("kubernetes.io/foo", False, False),
        ("requests.example.com/gpu", False, False),
        ("deviceclass.resource.kubernetes.io/gpu", False, True),
        ("example.com/bad name", False, False),
    ],
)
def test_resource_names(name: str, extended: bool, dra: bool) -> None:
    assert is_extended_resource_name(name) is extended
    assert is_dra_extended_resource_name(name) is dra


def test_classes_map_explicit_and_implicit_names() -> None:
    classes = ExtendedResourceClasses([device_class("gpu.example.com", EXT), device_class("plain")])
    assert classes.get(EXT) is not None and classes.get(EXT)["metadata"]["name"] == "gpu.example.com"  # type: ignore[index]
    assert classes.get(RESOURCE_DEVICE_CLASS_PREFIX + "gpu.example.com") is classes.get(EXT)
    assert classes.get(RESOURCE_DEVICE_CLASS_PREFIX + "plain") is not None
    assert classes.get("example.com/other") is None


@pytest.mark.parametrize(
    ("classes", "winner"),
    [
        # ExtendedResourceCache: the newer class takes a clashing name, the lower name on a tie.
        ([device_class("a", EXT, "2026-01-01T00:00:00Z"), device_class("b", EXT, "2026-01-02T00:00:00Z")], "b"),
        ([device_class("b", EXT, "2026-01-02T00:00:00Z"), device_class("a", EXT, "2026-01-01T00:00:00Z")], "b"),
        ([device_class("b", EXT), device_class("a", EXT)], "a"),
        ([device_class("a", EXT), device_class("b", EXT)], "a"),
    ],
)
def test_classes_clash_prefers_newer_then_lower_name(classes: list[dict[str, Any]], winner: str) -> None:
    found = ExtendedResourceClasses(classes).get(EXT)
    assert found is not None and found["metadata"]["name"] == winner


def test_mapped_resources_skips_zero_unmapped_and_native() -> None:
    classes = ExtendedResourceClasses([device_class("gpu", EXT)])
    requests = {EXT: 1, "example.com/other": 2, "cpu": 1000, RESOURCE_DEVICE_CLASS_PREFIX + "gpu": 0}
    assert mapped_resources(requests, classes) == {EXT}
