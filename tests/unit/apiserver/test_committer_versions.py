"""The committer writes resource.k8s.io in the storage form, whatever version a request speaks.

Through the real wiring (`committer_hooks.wired_core`: strict decoding, patches,
managed fields) and admission with DRAControlPlaneController on: a body is
decoded in the request's version, converted to the hub form and stamped
``resource.k8s.io/v1beta1``; an update or patch through a version keeps the
stored fields that version cannot express (docs/decisions/api-versions.md).
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

from services.api.machinery.conversion import from_storage
from services.apiserver.admission_chain import build_admission
from services.apiserver.committer_hooks import wired_core
from services.kube.feature_gates import FeatureGates
from services.runtime.committer_core import CommitterCore
from tests.support.committing import commit_batch as commit
from topics.envelope import Request, UserInfo

RG = "resource.k8s.io"
USER = UserInfo("admin", ("system:masters",))
NOW = datetime(2026, 12, 2, 9, 0, 0, tzinfo=UTC)
STORED = f"{RG}/v1beta1"
_ids = itertools.count()


def make_core() -> CommitterCore:
    uids = (f"uid-{i}" for i in itertools.count())
    gates = FeatureGates.parse("DRAControlPlaneController=true")
    core = wired_core(admission=build_admission(gates=gates), clock=lambda: NOW, new_uid=lambda: next(uids))
    commit(core, req("create", "", "namespaces", "", "default", object={"metadata": {"name": "default"}}))
    return core


def req(op: str, group: str, resource: str, namespace: str, name: str, **kw: Any) -> Request:
    kw.setdefault("options", {"fieldManager": "test"})
    return Request(
        id=f"r{next(_ids)}",
        op=op,  # type: ignore[arg-type]
        group=group,
        resource=resource,
        namespace=namespace,
        name=name,
        user=USER,
        reply_to="test",
        **kw,
    )



def one(core: CommitterCore, request: Request, code: int = 200) -> dict[str, Any]:
    (o,) = commit(core, request)
    assert o.code == code, o.status
    assert o.object is not None
    return o.object


def classic_claim() -> dict[str, Any]:
    return {
        "apiVersion": f"{RG}/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {
            "controller": "gpu.example.com",
            "devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]},
        },
    }


def stored(core: CommitterCore, key: str) -> dict[str, Any]:
    entry = core.index.get(key)
    assert entry is not None
    return entry[1]


CLAIM_KEY = f"{RG}/resourceclaims/default/c"


def allocated_classic_claim(core: CommitterCore, *, deallocating: bool = True) -> dict[str, Any]:
    created = one(
        core, req("create", RG, "resourceclaims", "default", "c", version="v1alpha3", object=classic_claim()), 201
    )
    status: dict[str, Any] = {
        "allocation": {
            "controller": "gpu.example.com",
            "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "p", "device": "d0"}]},
        },
    }
    if deallocating:
        status["deallocationRequested"] = True
    body = {**created, "status": status}
    return one(core, req("update_status", RG, "resourceclaims", "default", "c", version="v1alpha3", object=body))


def test_a_write_through_v1_is_stored_in_the_hub_form() -> None:
    core = make_core()
    v1 = {
        "apiVersion": f"{RG}/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
    }
    out = one(core, req("create", RG, "resourceclaims", "default", "c", version="v1", object=v1), 201)
    hub = stored(core, CLAIM_KEY)
    assert hub["apiVersion"] == STORED and out["apiVersion"] == STORED  # replies carry the stored form
    request = hub["spec"]["devices"]["requests"][0]
    assert request["deviceClassName"] == "gpu.example.com" and "exactly" not in request
    # Kubernetes records the version a manager wrote with.
    assert [(m["manager"], m["apiVersion"]) for m in hub["metadata"]["managedFields"]] == [("test", f"{RG}/v1")]


def test_a_slice_through_v1alpha3_has_its_capacity_wrapped_and_through_v1_its_basic() -> None:
    core = make_core()
    v1alpha3 = {
        "apiVersion": f"{RG}/v1alpha3",
        "kind": "ResourceSlice",
        "metadata": {"name": "a"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", "basic": {"capacity": {"memory": "80Gi"}}}],
        },
    }
    one(core, req("create", RG, "resourceslices", "", "a", version="v1alpha3", object=v1alpha3), 201)
    v1 = from_storage(stored(core, f"{RG}/resourceslices//a"), group=RG, kind="ResourceSlice", version="v1")
    assert v1["spec"]["devices"] == [{"name": "gpu-0", "capacity": {"memory": {"value": "80Gi"}}}]
    v1 = {**v1, "metadata": {"name": "b"}}
    one(core, req("create", RG, "resourceslices", "", "b", version="v1", object=v1), 201)
    for name in ("a", "b"):
        hub = stored(core, f"{RG}/resourceslices//{name}")
        assert hub["apiVersion"] == STORED
        assert hub["spec"]["devices"] == [{"name": "gpu-0", "basic": {"capacity": {"memory": {"value": "80Gi"}}}}]


def test_classic_fields_survive_an_update_and_a_status_update_through_v1() -> None:
    core = make_core()
    allocated_classic_claim(core)
    # A v1 client reads the claim (no classic fields in v1) and writes it back with a label.
    v1 = from_storage(stored(core, CLAIM_KEY), group=RG, kind="ResourceClaim", version="v1")
    assert "controller" not in v1["spec"] and "controller" not in v1["status"]["allocation"]
    v1["metadata"]["labels"] = {"seen-by": "v1"}
    one(core, req("update", RG, "resourceclaims", "default", "c", version="v1", object=v1))
    hub = stored(core, CLAIM_KEY)
    assert hub["metadata"]["labels"] == {"seen-by": "v1"}
    assert hub["spec"]["controller"] == "gpu.example.com"
    assert hub["status"]["allocation"]["controller"] == "gpu.example.com"
    assert hub["status"]["deallocationRequested"] is True


def test_classic_fields_survive_a_status_update_through_v1() -> None:
    core = make_core()
    allocated_classic_claim(core, deallocating=False)
    # A status write through v1 that changes what v1 can see keeps the rest.
    v1 = from_storage(stored(core, CLAIM_KEY), group=RG, kind="ResourceClaim", version="v1")
    v1["status"]["reservedFor"] = [{"resource": "pods", "name": "p", "uid": "u1"}]
    one(core, req("update_status", RG, "resourceclaims", "default", "c", version="v1", object=v1))
    hub = stored(core, CLAIM_KEY)
    assert hub["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "u1"}]
    assert hub["status"]["allocation"]["controller"] == "gpu.example.com"
    assert hub["spec"]["controller"] == "gpu.example.com"


def test_classic_fields_survive_patches_through_v1_which_apply_in_v1s_shape() -> None:
    core = make_core()
    allocated_classic_claim(core)
    patch = {"metadata": {"labels": {"patched": "merge"}}}
    out = one(core, req("patch", RG, "resourceclaims", "default", "c", version="v1", patch=patch, patch_type="merge"))
    assert out["spec"]["controller"] == "gpu.example.com"
    json_patch = [{"op": "add", "path": "/metadata/annotations", "value": {"a": "b"}}]
    one(core, req("patch", RG, "resourceclaims", "default", "c", version="v1", patch=json_patch, patch_type="json"))
    hub = stored(core, CLAIM_KEY)
    assert hub["metadata"]["labels"] == {"patched": "merge"} and hub["metadata"]["annotations"] == {"a": "b"}
    assert hub["spec"]["controller"] == "gpu.example.com"
    assert hub["status"]["allocation"]["controller"] == "gpu.example.com"
    # A patch through v1 addresses v1's paths: `exactly` exists there (claim specs are immutable: 422).
    path = "/spec/devices/requests/0/exactly/count"
    (o,) = commit(
        core,
        req(
            "patch", RG, "resourceclaims", "default", "c", version="v1",
            patch=[{"op": "add", "path": path, "value": 2}], patch_type="json",
        ),
    )  # fmt: skip
    assert o.code == 422 and "field is immutable" in str(o.status)


def test_a_device_class_patched_through_v1_keeps_its_suitable_nodes() -> None:
    core = make_core()
    cls = {
        "apiVersion": f"{RG}/v1alpha3",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {
            "selectors": [{"cel": {"expression": "true"}}],
            "suitableNodes": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}]},
        },
    }  # fmt: skip
    one(core, req("create", RG, "deviceclasses", "", "gpu", version="v1alpha3", object=cls), 201)
    patch = {"spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
    one(core, req("patch", RG, "deviceclasses", "", "gpu", version="v1", patch=patch, patch_type="strategic"))
    hub = stored(core, f"{RG}/deviceclasses//gpu")
    assert hub["spec"]["selectors"] == patch["spec"]["selectors"]
    assert hub["spec"]["suitableNodes"] == cls["spec"]["suitableNodes"]


def test_components_write_the_storage_form_and_a_1_31_body_is_not_one() -> None:
    core = make_core()
    hub_slice = {
        "apiVersion": STORED,
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", "basic": {"capacity": {"memory": {"value": "80Gi"}}}}],
        },
    }
    # No version (a component's Client sends the storage version): stored as written.
    one(core, req("create", RG, "resourceslices", "", "s", object=hub_slice), 201)
    assert stored(core, f"{RG}/resourceslices//s")["spec"] == hub_slice["spec"]
    bare = {**hub_slice, "metadata": {"name": "t"}}
    bare["spec"] = {**hub_slice["spec"], "devices": [{"name": "gpu-0", "basic": {"capacity": {"memory": "80Gi"}}}]}
    (o,) = commit(core, req("create", RG, "resourceslices", "", "t", object=bare))
    assert o.code == 400 and "DeviceCapacity" in str(o.status)


def test_a_kind_a_version_does_not_have_is_not_found() -> None:
    core = make_core()
    psc = {"metadata": {"name": "p", "namespace": "default"}, "spec": {}}
    (o,) = commit(core, req("create", RG, "podschedulingcontexts", "default", "p", version="v1", object=psc))
    assert o.code == 404
