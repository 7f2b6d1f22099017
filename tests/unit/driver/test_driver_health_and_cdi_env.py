"""Device health reports (driver → node agent) and the CDI environment of admin-access and shared allocations."""

from __future__ import annotations

from typing import Any

import pytest

from services.driver import cdi
from services.driver.prepared import plan_claim
from services.kubeletplugin.health import decode_health, encode_health

UID = "4b1c-uid"


def test_health_report_round_trip_and_unknown_for_what_is_not_reported() -> None:
    report = {("node-1", "gpu-0"): "Healthy", ("node-1", "gpu-1"): "Unhealthy"}
    assert decode_health(encode_health(report)) == report
    assert decode_health(b'{"devices": [{"poolName": "p", "deviceName": "d", "health": "Sick"}]}') == {
        ("p", "d"): "Unknown"
    }
    assert decode_health(b"not json") == {}


def claim(results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "metadata": {"name": "c", "namespace": "ns", "uid": UID},
        "status": {"allocation": {"devices": {"results": results}}},
    }


def env_of(driver: str, results: list[dict[str, Any]], allocatable: set[str]) -> dict[str, list[str]]:
    planned = plan_claim(claim(results), driver=driver, node="node-1", allocatable=allocatable)
    spec = planned.cdi_spec(driver)
    return {d["name"]: d["containerEdits"]["env"] for d in spec["devices"]}


@pytest.mark.parametrize(("admin", "value"), [(True, "true"), (False, "false")])
def test_admin_access_allocations_get_dra_admin_access_in_the_cdi_edits(admin: bool, value: str) -> None:
    """dra-example-driver's CreateClaimSpecFile: DRA_ADMIN_ACCESS=<adminAccess> on every claim device."""
    results = [
        {
            "request": "admin-gpu",
            "driver": "gpu.example.com",
            "pool": "node-1",
            "device": f"gpu-{i}",
            **({"adminAccess": True} if admin else {}),
        }
        for i in range(2)
    ]
    env = env_of("gpu.example.com", results, {"gpu-0", "gpu-1"})
    assert list(env) == [f"{UID}-gpu-0", f"{UID}-gpu-1"]
    for device_env in env.values():
        assert f"DRA_ADMIN_ACCESS={value}" in device_env


def test_shares_of_one_gpu_are_distinct_cdi_devices_with_their_capacity() -> None:
    shares = ["0b3f9a6c-8d0e-4c5b-9c61-2f0f1a2b3c4d", "1b3f9a6c-8d0e-4c5b-9c61-2f0f1a2b3c4d"]
    results = [
        {
            "request": "gpu",
            "driver": "gpu.example.com",
            "pool": "node-1",
            "device": "gpu-0",
            "shareID": s,
            "consumedCapacity": {"memory": "16Gi", "compute": "20"},
        }
        for s in shares
    ]
    planned = plan_claim(claim(results), driver="gpu.example.com", node="node-1", allocatable={"gpu-0"})
    assert [d.cdi_device_ids[0] for d in planned.devices] == [
        cdi.qualified_name("gpu.example.com", f"{UID}-gpu-0-{s}") for s in shares
    ]
    env = env_of("gpu.example.com", results, {"gpu-0"})
    assert all({"GPU_DEVICE_0_MEMORY=16Gi", "GPU_DEVICE_0_COMPUTE=20"} <= set(e) for e in env.values())


def test_nic_allocations_get_the_net_drivers_rates_and_no_gpu_environment() -> None:
    results = [
        {
            "request": "nic",
            "driver": "net.example.com",
            "pool": "node-1",
            "device": "nic-0",
            "shareID": "0b3f9a6c-8d0e-4c5b-9c61-2f0f1a2b3c4d",
            "consumedCapacity": {"ingressBandwidth": "10G", "egressBandwidth": "5G", "vfs": "1"},
        }
    ]
    (env,) = env_of("net.example.com", results, {"nic-0"}).values()
    assert "NET_DEVICE_0_INGRESS_RATE=10000000000" in env and "NET_DEVICE_0_EGRESS_RATE=5000000000" in env
    assert not any(e.startswith("GPU_DEVICE_0=") for e in env)
