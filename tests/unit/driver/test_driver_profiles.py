"""Driver profiles: the devices and counter sets each flag combination publishes, valid as 1.37 slices.

The numbers are dra-example-driver's (internal/profiles/gpu and net): 80Gi and
100 compute per GPU split evenly among partitions, NICs with 100 vfs and 100G
of bandwidth, 1G by default per allocation.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.api.admission.validation.resource_slice import validate_resource_slice_spec
from services.driver.inventory import InventoryError
from services.driver.profiles import (
    BINDING_CONDITION,
    BINDING_FAILURE_CONDITION,
    DriverProfile,
    parse_device_taint,
    parse_profile_spec,
)
from services.driver.slices import desired_slices, plan_slices
from services.kube.resource_limits import LIMITS_1_37

NODE = "node-1"


def slices_of(spec: str) -> tuple[str, list[dict[str, Any]]]:
    driver, profile = parse_profile_spec(spec)
    pool = profile.resources(NODE)
    return driver, desired_slices(
        node=NODE, driver=driver, devices=pool.devices, generation=1, shared_counters=pool.shared_counters
    )


def basic(slices: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for s in slices:
        for d in s["spec"].get("devices") or ():
            if d["name"] == name:
                return dict(d["basic"])
    raise AssertionError(f"no device {name}")


@pytest.mark.parametrize(
    "spec",
    [
        "gpu",
        "gpu,partitions=4",
        "gpu,shared",
        "gpu,partitions=2,shared",
        "net",
        "gpu,binding-conditions,binds-to-node",
        "gpu,taint=gpu-0=example.com/broken=true:NoExecute",
    ],
)
def test_every_profile_publishes_slices_that_1_37_accepts(spec: str) -> None:
    _, slices = slices_of(spec)
    for s in slices:
        assert validate_resource_slice_spec(s["spec"], None, limits=LIMITS_1_37) == []
        assert s["spec"]["pool"]["resourceSliceCount"] == len(slices)


def test_partitions_draw_on_one_counter_set_per_gpu_in_a_slice_of_their_own() -> None:
    _, slices = slices_of("gpu,partitions=4,count=2")
    counters, devices = slices
    assert "devices" not in counters["spec"]
    assert counters["spec"]["sharedCounters"] == [
        {"name": f"gpu-{i}-counters", "counters": {"memory": {"value": "80Gi"}, "compute": {"value": "100"}}}
        for i in range(2)
    ]
    names = [d["name"] for d in devices["spec"]["devices"]]
    assert names == [
        *(f"gpu-0-partition-{j}" for j in range(4)),
        "gpu-0-full",
        *(f"gpu-1-partition-{j}" for j in range(4)),
        "gpu-1-full",
    ]
    part = basic(slices, "gpu-1-partition-3")
    assert part["consumesCounters"] == [
        {"counterSet": "gpu-1-counters", "counters": {"memory": {"value": "20Gi"}, "compute": {"value": "25"}}}
    ]
    assert part["attributes"]["partition"] == {"int": 3} and part["attributes"]["partitionable"] == {"bool": True}
    full = basic(slices, "gpu-0-full")
    assert full["consumesCounters"][0]["counters"] == {"memory": {"value": "80Gi"}, "compute": {"value": "100"}}
    assert full["attributes"]["full"] == {"bool": True}


def test_shared_gpus_carry_allow_multiple_allocations_and_a_request_policy() -> None:
    _, slices = slices_of("gpu,shared")
    gpu = basic(slices, "gpu-3")
    assert gpu["allowMultipleAllocations"] is True
    assert gpu["capacity"]["memory"] == {
        "value": "80Gi",
        "requestPolicy": {"default": "80Gi", "validRange": {"min": "1Gi", "max": "80Gi", "step": "1Gi"}},
    }
    assert gpu["capacity"]["compute"]["requestPolicy"]["validRange"] == {"min": "1", "max": "100", "step": "1"}


def test_shared_partitions_have_the_partitions_capacity_as_their_policy_range() -> None:
    _, slices = slices_of("gpu,partitions=4,shared")
    part = basic(slices, "gpu-0-partition-0")
    assert part["allowMultipleAllocations"] is True
    assert part["capacity"]["compute"]["requestPolicy"] == {
        "default": "25",
        "validRange": {"min": "1", "max": "25", "step": "1"},
    }


def test_net_profile_shares_nics_with_bandwidth_policies() -> None:
    driver, slices = slices_of("net,count=2")
    assert driver == "net.example.com"
    nic = basic(slices, "nic-1")
    assert nic["allowMultipleAllocations"] is True
    assert nic["capacity"]["vfs"] == {"value": "100", "requestPolicy": {"default": "1", "validValues": ["1"]}}
    assert nic["capacity"]["ingressBandwidth"]["requestPolicy"] == {
        "default": "1G",
        "validRange": {"min": "100M", "max": "100G", "step": "1M"},
    }


def test_binding_conditions_on_every_device() -> None:
    _, slices = slices_of("gpu,binding-conditions,binds-to-node,count=2")
    for name in ("gpu-0", "gpu-1"):
        gpu = basic(slices, name)
        assert gpu["bindingConditions"] == [BINDING_CONDITION]
        assert gpu["bindingFailureConditions"] == [BINDING_FAILURE_CONDITION]
        assert gpu["bindsToNode"] is True


def test_driver_side_taints_on_the_named_device_only() -> None:
    _, slices = slices_of("gpu,count=2,taint=gpu-1=example.com/broken=true:NoExecute,taint=gpu-1=maint:NoSchedule")
    assert "taints" not in basic(slices, "gpu-0")
    assert basic(slices, "gpu-1")["taints"] == [
        {"key": "example.com/broken", "value": "true", "effect": "NoExecute"},
        {"key": "maint", "effect": "NoSchedule"},
    ]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("tpu", "unknown driver profile 'tpu'"),
        ("gpu,partitions=x", "unknown option 'partitions=x'"),
        ("net,partitions=2", "--gpu-partitions needs the gpu profile"),
        ("gpu,taint=gpu-0=k:Sometimes", "effect must be one of None, NoSchedule, NoExecute"),
        ("gpu,count=1,taint=gpu-5=k:NoSchedule", "names device 'gpu-5', which this node does not have"),
        ("gpu,health=gpu-0=Sick", "a device health is"),
    ],
)
def test_bad_profiles_are_one_line_errors(spec: str, message: str) -> None:
    with pytest.raises(InventoryError, match=message):
        parse_profile_spec(spec)[1].resources(NODE)


def test_parse_device_taint_without_value() -> None:
    taint = parse_device_taint("gpu-0=example.com/k:NoSchedule")
    assert (taint.device, taint.key, taint.value, taint.effect) == ("gpu-0", "example.com/k", "", "NoSchedule")


def test_the_default_profile_is_plain() -> None:
    assert DriverProfile().plain and DriverProfile(count=3).plain
    assert not DriverProfile(partitions=2).plain


def test_republishing_the_same_pool_with_counters_writes_nothing() -> None:
    _, profile = parse_profile_spec("gpu,partitions=2,count=1")
    pool = profile.resources(NODE)
    existing = desired_slices(
        node=NODE, driver="gpu.example.com", devices=pool.devices, generation=3, shared_counters=pool.shared_counters
    )
    for i, s in enumerate(existing):
        s["metadata"]["resourceVersion"] = str(i)
    plan = plan_slices(
        existing=existing,
        node=NODE,
        driver="gpu.example.com",
        devices=pool.devices,
        shared_counters=pool.shared_counters,
    )
    assert plan.empty
    changed = plan_slices(
        existing=existing, node=NODE, driver="gpu.example.com", devices=pool.devices, shared_counters=[]
    )
    assert changed.generation == 4 and changed.deletes == [existing[1]["metadata"]["name"]]
