"""kubelet's checks of a pod's claims, and the CDI devices each container gets."""

from __future__ import annotations

from typing import Any

import pytest

from services.kube.resourceclaim import known_claim_names
from services.nodeagent.pod_claims import (
    PodClaimsError,
    allocated_resources_status,
    claims_of_pod,
    drivers_of,
)


def pod(*pod_claims: dict[str, Any], statuses: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "pod0", "namespace": "ns", "uid": "pod-uid"},
        "spec": {"nodeName": "node-a", "resourceClaims": list(pod_claims), "containers": []},
        "status": {"resourceClaimStatuses": statuses or []},
    }


def claim(name: str, *, reserved: bool = True, owner: str | None = None, uid: str = "claim-uid") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": uid}
    if owner:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "pod0", "uid": owner, "controller": True}
        ]
    status: dict[str, Any] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "node-a", "device": "gpu-0"},
                    {"request": "nic", "driver": "net.example.com", "pool": "node-a", "device": "eth1"},
                ]
            }
        }
    }
    if reserved:
        status["reservedFor"] = [{"resource": "pods", "name": "pod0", "uid": "pod-uid"}]
    return {"metadata": meta, "status": status}


def lookup(*claims: dict[str, Any]) -> Any:
    by_name = {c["metadata"]["name"]: c for c in claims}
    return lambda ns, name: by_name.get(name)


def test_reserved_claims_by_name_and_from_templates() -> None:
    p = pod(
        {"name": "shared", "resourceClaimName": "single-gpu"},
        {"name": "gpu", "resourceClaimTemplateName": "t"},
        statuses=[{"name": "gpu", "resourceClaimName": "pod0-gpu-x7k2p"}],
    )
    uses = claims_of_pod(p, lookup(claim("single-gpu"), claim("pod0-gpu-x7k2p", owner="pod-uid")))
    assert [(u.pod_claim_name, u.name) for u in uses] == [("shared", "single-gpu"), ("gpu", "pod0-gpu-x7k2p")]
    assert known_claim_names(p) == ["single-gpu", "pod0-gpu-x7k2p"]


def test_a_template_claim_that_needs_no_claim_is_skipped() -> None:
    p = pod({"name": "gpu", "resourceClaimTemplateName": "t"}, statuses=[{"name": "gpu"}])
    assert claims_of_pod(p, lookup()) == []


@pytest.mark.parametrize(
    ("p", "claims", "message"),
    [
        (
            pod({"name": "gpu", "resourceClaimName": "c"}),
            [claim("c", reserved=False, uid="cu")],
            "pod pod0(pod-uid) is not allowed to use resource claim c(cu)",
        ),
        (
            pod({"name": "gpu", "resourceClaimName": "c"}),
            [],
            'failed to fetch ResourceClaim c referenced by pod pod0: resourceclaims.resource.k8s.io "c" not found',
        ),
        (
            pod({"name": "gpu", "resourceClaimTemplateName": "t"}),
            [],
            'prepare resource claim: pod "ns/pod0": ResourceClaim not created yet',
        ),
        (
            pod(
                {"name": "gpu", "resourceClaimTemplateName": "t"}, statuses=[{"name": "gpu", "resourceClaimName": "g"}]
            ),
            [claim("g", owner="someone-else")],
            "ResourceClaim ns/g was not created for pod ns/pod0 (pod is not owner)",
        ),
    ],
)
def test_kubelets_messages(p: dict[str, Any], claims: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(PodClaimsError) as err:
        claims_of_pod(p, lookup(*claims))
    assert str(err.value) == message


def test_drivers_of_a_claim() -> None:
    assert drivers_of(claim("c")) == ["gpu.example.com", "net.example.com"]
    assert drivers_of({"status": {}}) == []


def device(request: str, name: str) -> dict[str, Any]:
    return {
        "driver": "gpu.example.com",
        "requestNames": [request],
        "poolName": "node-1",
        "deviceName": name,
        "cdiDeviceIDs": [f"k8s.gpu.example.com/gpu=uid-{name}", "k8s.gpu.example.com/gpu=common"],
    }


def test_allocated_resources_status_per_container_and_request() -> None:
    """kubelet 1.37: one entry per device, named by its first CDI id, with the driver's health (Unknown without)."""
    p = pod()
    p["spec"]["containers"] = [
        {"name": "ts-ctr", "resources": {"claims": [{"name": "shared-gpus", "request": "ts-gpu"}]}},
        {"name": "all", "resources": {"claims": [{"name": "shared-gpus"}]}},
        {"name": "none"},
    ]
    p["spec"]["initContainers"] = [{"name": "init", "resources": {"claims": [{"name": "shared-gpus"}]}}]
    devices = {"shared-gpus": [device("ts-gpu", "gpu-0"), device("sp-gpu", "gpu-1")]}
    health = {("gpu.example.com", "node-1", "gpu-1"): "Unhealthy"}
    result = allocated_resources_status(p, devices, health=lambda *key: health.get(key, "Unknown"))
    assert result["ts-ctr"] == [
        {
            "name": "claim:shared-gpus/ts-gpu",
            "resources": [{"resourceID": "k8s.gpu.example.com/gpu=uid-gpu-0", "health": "Unknown"}],
        }
    ]
    assert result["all"] == [
        {
            "name": "claim:shared-gpus",
            "resources": [
                {"resourceID": "k8s.gpu.example.com/gpu=uid-gpu-0", "health": "Unknown"},
                {"resourceID": "k8s.gpu.example.com/gpu=uid-gpu-1", "health": "Unhealthy"},
            ],
        }
    ]
    assert "init" not in result  # kubelet fills containerStatuses only
    assert "none" not in result


@pytest.mark.parametrize(
    ("device_entry", "want"),
    [
        # No CDI ids: kubelet's fallback <driver>/<pool>/<device>.
        ({"driver": "d.example.com", "poolName": "p", "deviceName": "x", "cdiDeviceIDs": []}, "d.example.com/p/x"),
        ({"driver": "d.example.com", "poolName": "p", "deviceName": "x", "cdiDeviceIDs": ["v/c=a", "v/c=b"]}, "v/c=a"),
    ],
)
def test_resource_id_is_the_first_cdi_id_or_the_device(device_entry: dict[str, Any], want: str) -> None:
    p = pod()
    p["spec"]["containers"] = [{"name": "c", "resources": {"claims": [{"name": "shared-gpus"}]}}]
    result = allocated_resources_status(p, {"shared-gpus": [device_entry, dict(device_entry)]})
    assert result["c"] == [{"name": "claim:shared-gpus", "resources": [{"resourceID": want, "health": "Unknown"}]}]
