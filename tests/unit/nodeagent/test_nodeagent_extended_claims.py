"""The node agent and the claim the scheduler made for a pod's extended resources (1.37, DRAExtendedResource).

As kubelet 1.37's DRA manager (pkg/kubelet/cm/dra/manager.go): the claim named
in ``status.extendedResourceClaimStatus`` is prepared like a pod claim that
names it directly (reservedFor checked, no owner check), and a container gets
the CDI devices of the requests mapped to it for the extended resources it asks for.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.nodeagent.pod_claims import (
    EXTENDED_POD_CLAIM,
    PodClaimsError,
    claims_of_pod,
    container_cdi_devices,
    used_claim_keys,
    used_claim_names,
)

GPU = "example.com/gpu"


def extended_pod(*, mappings: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "train", "namespace": "ns", "uid": "pod-uid"},
        "spec": {
            "nodeName": "node-a",
            "containers": [
                {"name": "a", "resources": {"requests": {GPU: "1"}, "limits": {GPU: "1"}}},
                {"name": "b", "resources": {"requests": {GPU: "1"}, "limits": {GPU: "1"}}},
                {"name": "sidecar-free", "resources": {}},
            ],
        },
        "status": {
            "extendedResourceClaimStatus": {
                "resourceClaimName": "train-extended-resources-abcde",
                "requestMappings": mappings
                if mappings is not None
                else [
                    {"containerName": "a", "resourceName": GPU, "requestName": "container-0-request-0"},
                    {"containerName": "b", "resourceName": GPU, "requestName": "container-1-request-0"},
                ],
            }
        },
    }


def extended_claim(*, reserved: bool = True) -> dict[str, Any]:
    status: dict[str, Any] = {"allocation": {"devices": {"results": []}}}
    if reserved:
        status["reservedFor"] = [{"resource": "pods", "name": "train", "uid": "pod-uid"}]
    return {"metadata": {"name": "train-extended-resources-abcde", "namespace": "ns", "uid": "c-uid"}, "status": status}


def test_the_extended_claim_is_prepared_like_a_pod_claim() -> None:
    p = extended_pod()
    uses = claims_of_pod(p, lambda ns, name: extended_claim() if name == "train-extended-resources-abcde" else None)
    assert [(u.pod_claim_name, u.name) for u in uses] == [(EXTENDED_POD_CLAIM, "train-extended-resources-abcde")]
    assert used_claim_names(p) == ["train-extended-resources-abcde"]
    assert used_claim_keys(p) == ["ns/train-extended-resources-abcde"]


def test_the_extended_claim_must_be_reserved_for_the_pod() -> None:
    with pytest.raises(PodClaimsError) as err:
        claims_of_pod(extended_pod(), lambda ns, name: extended_claim(reserved=False))
    assert str(err.value) == (
        "pod train(pod-uid) is not allowed to use resource claim train-extended-resources-abcde(c-uid)"
    )


def test_a_missing_extended_claim_is_kubelets_not_found() -> None:
    with pytest.raises(PodClaimsError) as err:
        claims_of_pod(extended_pod(), lambda ns, name: None)
    assert str(err.value) == (
        "failed to fetch ResourceClaim train-extended-resources-abcde referenced by pod train: "
        'resourceclaims.resource.k8s.io "train-extended-resources-abcde" not found'
    )


def test_each_container_gets_the_devices_of_its_mapped_requests() -> None:
    devices = {
        EXTENDED_POD_CLAIM: [
            {"requestNames": ["container-0-request-0"], "cdiDeviceIDs": ["gpu.example.com/gpu=gpu-0"]},
            {"requestNames": ["container-1-request-0"], "cdiDeviceIDs": ["gpu.example.com/gpu=gpu-1"]},
        ]
    }
    assert container_cdi_devices(extended_pod(), devices) == {
        "a": ["gpu.example.com/gpu=gpu-0"],
        "b": ["gpu.example.com/gpu=gpu-1"],
    }


def test_a_mapping_for_a_resource_the_container_does_not_ask_for_gives_nothing() -> None:
    p = extended_pod(mappings=[{"containerName": "sidecar-free", "resourceName": GPU, "requestName": "x"}])
    devices = {EXTENDED_POD_CLAIM: [{"requestNames": ["x"], "cdiDeviceIDs": ["gpu.example.com/gpu=gpu-0"]}]}
    assert container_cdi_devices(p, devices) == {}
