"""status.devices as the driver writes them: Ready after prepare, binding conditions, data and network data."""

from __future__ import annotations

from typing import Any

from services.driver.device_status import binding_conditions_met, prepared_statuses
from services.driver.profiles import nic_network_data

DRIVER, NODE, NOW = "gpu.example.com", "node-1", "2026-12-02T07:00:00Z"
INFO = {"gpu-0": {"attributes": {"uuid": {"string": "gpu-u0"}, "model": {"string": "M"}, "index": {"int": 0}}}}


def claim(results: list[dict[str, Any]], devices: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"allocation": {"devices": {"results": results}}}
    if devices is not None:
        status["devices"] = devices
    return {"metadata": {"name": "c", "namespace": "ns", "uid": "u", "generation": 1}, "status": status}


def result(device: str, *, driver: str = DRIVER, pool: str = NODE, **extra: Any) -> dict[str, Any]:
    return {"request": "gpu", "driver": driver, "pool": pool, "device": device, **extra}


def test_prepared_devices_get_ready_and_the_example_drivers_data() -> None:
    c = claim([result("gpu-0"), result("nic-0", driver="net.example.com")])
    new = prepared_statuses(c, driver=DRIVER, pool=NODE, now=NOW, device_info=INFO.get)
    assert new == [
        {
            "driver": DRIVER,
            "pool": NODE,
            "device": "gpu-0",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "lastTransitionTime": NOW,
                    "reason": "DevicePrepared",
                    "message": "the device is prepared on the node",
                    "observedGeneration": 1,
                }
            ],
            "data": {"uuid": {"string": "gpu-u0"}, "model": {"string": "M"}},
        }
    ]
    # Written once: the same claim with that status needs no write.
    assert (
        prepared_statuses(
            claim(c["status"]["allocation"]["devices"]["results"], new),
            driver=DRIVER,
            pool=NODE,
            now="later",
            device_info=INFO.get,
        )
        is None
    )


def test_shares_of_a_device_get_an_entry_each_with_network_data() -> None:
    shares = ["0b3f9a6c-8d0e-4c5b-9c61-2f0f1a2b3c4d", "1b3f9a6c-8d0e-4c5b-9c61-2f0f1a2b3c4d"]
    c = claim([result("nic-0", driver="net.example.com", shareID=s) for s in shares])
    new = prepared_statuses(
        c,
        driver="net.example.com",
        pool=NODE,
        now=NOW,
        device_info=lambda d: None,
        network_data=lambda d, n: nic_network_data(d, node=NODE, share=n),
    )
    assert new is not None
    assert [e["shareID"] for e in new] == shares
    assert [e["networkData"]["interfaceName"] for e in new] == ["net0s0", "net0s1"]
    assert len({e["networkData"]["ips"][0] for e in new}) == 2


def test_other_drivers_entries_and_other_conditions_are_kept() -> None:
    other = {"driver": "x.example.com", "pool": "p", "device": "d", "conditions": []}
    mine = {
        "driver": DRIVER,
        "pool": NODE,
        "device": "gpu-0",
        "conditions": [{"type": "BindingConditions", "status": "True", "lastTransitionTime": "t0", "reason": "R"}],
    }
    new = prepared_statuses(
        claim([result("gpu-0")], [other, mine]), driver=DRIVER, pool=NODE, now=NOW, device_info=INFO.get
    )
    assert new is not None and new[0] == other
    assert [c["type"] for c in new[1]["conditions"]] == ["BindingConditions", "Ready"]


def test_binding_conditions_are_set_true_for_this_drivers_pool_only() -> None:
    bc = {"bindingConditions": ["BindingConditions"], "bindingFailureConditions": ["BindingFailureConditions"]}
    c = claim([result("gpu-0", **bc), result("gpu-1", pool="node-2", **bc), result("gpu-2")])
    new = binding_conditions_met(c, driver=DRIVER, pools=[NODE], now=NOW)
    assert new is not None
    assert [(e["device"], [(x["type"], x["status"]) for x in e["conditions"]]) for e in new] == [
        ("gpu-0", [("BindingConditions", "True")])
    ]
    assert (
        binding_conditions_met(
            claim(c["status"]["allocation"]["devices"]["results"], new), driver=DRIVER, pools=[NODE], now="later"
        )
        is None
    )


def test_a_failed_device_is_not_marked_ready_for_binding() -> None:
    bc = {"bindingConditions": ["BindingConditions"], "bindingFailureConditions": ["BindingFailureConditions"]}
    failed = {
        "driver": DRIVER,
        "pool": NODE,
        "device": "gpu-0",
        "conditions": [
            {"type": "BindingFailureConditions", "status": "True", "lastTransitionTime": "t", "reason": "R"}
        ],
    }
    assert binding_conditions_met(claim([result("gpu-0", **bc)], [failed]), driver=DRIVER, pools=None, now=NOW) is None
