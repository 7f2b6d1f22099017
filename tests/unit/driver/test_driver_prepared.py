"""Planning a prepare: devices, configs, CDI spec content and ids, and dra-example-driver's errors."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from services.driver import cdi
from services.driver.config import API_VERSION, default_gpu_config
from services.driver.prepared import (
    PreparedDevice,
    PrepareError,
    device_env,
    env_suffix,
    plan_claim,
    reserved_on_node,
)

DRIVER, NODE, UID = "gpu.example.com", "node-a", "8f1c-uid"
ALLOCATABLE = {f"gpu-{i}" for i in range(8)}


def result(request: str, device: str, *, pool: str = NODE, driver: str = DRIVER) -> dict[str, str]:
    return {"request": request, "driver": driver, "pool": pool, "device": device}


def gpu_config(sharing: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": "GpuConfig", "sharing": sharing}


def claim(results: list[dict[str, str]], config: list[dict[str, Any]] | None = None, **status: Any) -> dict[str, Any]:
    allocation = {"devices": {"results": results, "config": config or []}}
    return {
        "metadata": {"name": "c", "namespace": "ns", "uid": UID},
        "status": {"allocation": allocation, **status},
    }


def plan(c: dict[str, Any]) -> Any:
    return plan_claim(c, driver=DRIVER, node=NODE, allocatable=ALLOCATABLE)


def test_one_gpu_with_the_default_config() -> None:
    planned = plan(claim([result("gpu", "gpu-3")]))
    assert planned.devices == (
        PreparedDevice(
            requests=("gpu",),
            pool=NODE,
            device="gpu-3",
            cdi_device_ids=(f"k8s.gpu.example.com/gpu={UID}-gpu-3", "k8s.gpu.example.com/gpu=common"),
            env=(
                f"GPU_DEVICE_3_RESOURCE_CLAIM={UID}",
                "DRA_ADMIN_ACCESS=false",
                "GPU_DEVICE_3=gpu-3",
                "GPU_DEVICE_3_SHARING_STRATEGY=TimeSlicing",
                "GPU_DEVICE_3_TIMESLICE_INTERVAL=Default",
            ),
        ),
    )


def test_cdi_spec_of_a_claim_with_per_request_configs() -> None:
    """gpu-test5: one claim, a time-sliced and a space-partitioned GPU."""
    config = [
        {
            "source": "FromClaim",
            "requests": ["ts-gpu"],
            "opaque": {
                "driver": DRIVER,
                "parameters": gpu_config({"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}}),
            },
        },
        {
            "source": "FromClaim",
            "requests": ["sp-gpu"],
            "opaque": {
                "driver": DRIVER,
                "parameters": gpu_config(
                    {"strategy": "SpacePartitioning", "spacePartitioningConfig": {"partitionCount": 10}}
                ),
            },
        },
    ]
    planned = plan(claim([result("ts-gpu", "gpu-0"), result("sp-gpu", "gpu-1")], config))
    spec = planned.cdi_spec(DRIVER)
    assert spec == {
        "cdiVersion": "0.3.0",
        "kind": "k8s.gpu.example.com/gpu",
        "devices": [
            {
                "name": f"{UID}-gpu-0",
                "containerEdits": {
                    "env": [
                        f"GPU_DEVICE_0_RESOURCE_CLAIM={UID}",
                        "DRA_ADMIN_ACCESS=false",
                        "GPU_DEVICE_0=gpu-0",
                        "GPU_DEVICE_0_SHARING_STRATEGY=TimeSlicing",
                        "GPU_DEVICE_0_TIMESLICE_INTERVAL=Long",
                    ]
                },
            },
            {
                "name": f"{UID}-gpu-1",
                "containerEdits": {
                    "env": [
                        f"GPU_DEVICE_1_RESOURCE_CLAIM={UID}",
                        "DRA_ADMIN_ACCESS=false",
                        "GPU_DEVICE_1=gpu-1",
                        "GPU_DEVICE_1_SHARING_STRATEGY=SpacePartitioning",
                        "GPU_DEVICE_1_PARTITION_COUNT=10",
                    ]
                },
            },
        ],
    }
    assert yaml.safe_load(cdi.render(spec)) == spec


def test_the_claims_config_overrides_the_class_config() -> None:
    config = [
        {
            "source": "FromClass",
            "requests": ["gpu"],
            "opaque": {"driver": DRIVER, "parameters": gpu_config({"strategy": "SpacePartitioning"})},
        },
        {
            "source": "FromClaim",
            "opaque": {
                "driver": DRIVER,
                "parameters": gpu_config({"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Medium"}}),
            },
        },
    ]
    (device,) = plan(claim([result("gpu", "gpu-0")], config)).devices
    assert "GPU_DEVICE_0_TIMESLICE_INTERVAL=Medium" in device.env


def test_results_of_other_drivers_are_left_to_them() -> None:
    planned = plan(claim([result("gpu", "gpu-0"), result("nic", "eth0", driver="net.example.com", pool="x")]))
    assert [d.device for d in planned.devices] == ["gpu-0"]


@pytest.mark.parametrize(
    ("c", "message"),
    [
        ({"metadata": {"uid": UID}, "status": {}}, "prepare failed: claim not yet allocated"),
        (claim([result("gpu", "gpu-9")]), "prepare failed: requested GPU is not allocatable: gpu-9"),
        (claim([result("gpu", "gpu-0", pool="node-b")]), "requested GPU is not allocatable: gpu-0"),
        (
            claim([result("gpu", "gpu-0")], [{"source": "Elsewhere"}]),
            "prepare failed: error getting opaque device configs: invalid config source: Elsewhere",
        ),
        (
            claim(
                [result("gpu", "gpu-0")],
                [
                    {
                        "source": "FromClaim",
                        "opaque": {
                            "driver": DRIVER,
                            "parameters": gpu_config(
                                {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Hourly"}}
                            ),
                        },
                    }
                ],
            ),
            "prepare failed: error validating GPU config: unknown time-slice interval: Hourly",
        ),
        (
            claim(
                [result("gpu", "gpu-0")],
                [
                    {
                        "source": "FromClaim",
                        "opaque": {
                            "driver": DRIVER,
                            "parameters": gpu_config(
                                {"strategy": "TimeSlicing", "spacePartitioningConfig": {"partitionCount": 2}}
                            ),
                        },
                    }
                ],
            ),
            "prepare failed: error applying GPU config: unable to get time slicing config for device gpu-0: "
            "cannot use SpacePartitioningConfig with the 'TimeSlicing' strategy",
        ),
    ],
)
def test_errors_have_dra_example_drivers_messages(c: dict[str, Any], message: str) -> None:
    with pytest.raises(PrepareError) as err:
        plan(c)
    assert str(err.value) == message or message in str(err.value)


def test_an_invalid_config_that_no_device_uses_is_not_an_error() -> None:
    config = [
        {
            "source": "FromClaim",
            "requests": ["unused"],
            "opaque": {"driver": DRIVER, "parameters": gpu_config({"strategy": "Bogus"})},
        },
    ]
    assert plan(claim([result("gpu", "gpu-0")], config)).devices[0].device == "gpu-0"


@pytest.mark.parametrize(("device", "suffix"), [("gpu-0", "0"), ("gpu-12", "12"), ("mig-1g.5gb", "MIG_1G_5GB")])
def test_env_suffix(device: str, suffix: str) -> None:
    assert env_suffix(device) == suffix


def test_device_env_without_sharing() -> None:
    from services.driver.config import GpuConfig

    assert device_env("gpu-1", GpuConfig()) == ["GPU_DEVICE_1=gpu-1"]
    assert device_env("gpu-1", default_gpu_config())[-1] == "GPU_DEVICE_1_TIMESLICE_INTERVAL=Default"


def test_cdi_names_follow_the_cdi_library() -> None:
    assert cdi.claim_spec_file(DRIVER, UID) == f"k8s.gpu.example.com-gpu_{UID}.yaml"
    assert cdi.common_spec_file(DRIVER) == "k8s.gpu.example.com-gpu_common.yaml"
    assert cdi.common_spec(driver=DRIVER, node=NODE)["devices"][0]["containerEdits"]["env"] == [
        f"KUBERNETES_NODE_NAME={NODE}",
        f"DRA_RESOURCE_DRIVER_NAME={DRIVER}",
    ]


def test_prepared_devices_round_trip_through_the_wire_form() -> None:
    (device,) = plan(claim([result("gpu", "gpu-2")])).devices
    assert PreparedDevice.from_wire(device.to_wire()) == device


PODS = {
    ("ns", "here"): {"metadata": {"uid": "p1"}, "spec": {"nodeName": NODE}},
    ("ns", "there"): {"metadata": {"uid": "p2"}, "spec": {"nodeName": "node-b"}},
}


@pytest.mark.parametrize(
    ("reserved_for", "expected"),
    [
        ([{"resource": "pods", "name": "here", "uid": "p1"}], True),
        ([{"resource": "pods", "name": "there", "uid": "p2"}], False),
        ([{"resource": "pods", "name": "here", "uid": "stale"}], False),
        ([{"resource": "pods", "name": "gone", "uid": "p3"}], False),
        ([{"apiGroup": "example.com", "resource": "things", "name": "here", "uid": "p1"}], False),
        ([], False),
    ],
)
def test_reserved_on_node(reserved_for: list[dict[str, str]], expected: bool) -> None:
    c = claim([result("gpu", "gpu-0")], reservedFor=reserved_for)
    assert reserved_on_node(c, node=NODE, pod=lambda ns, name: PODS.get((ns, name))) is expected
