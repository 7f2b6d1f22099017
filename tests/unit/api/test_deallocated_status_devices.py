"""1.37's dropDeallocatedStatusDevices: a status update that deallocates drops those devices' status entries.

Expectations from k8s.io/kubernetes@v1.37.2 pkg/registry/resource/resourceclaim/strategy.go
(``dropDeallocatedStatusDevices``, run by the status strategy's PrepareForUpdate): entries
are matched by driver, pool, device and shareID; entries of devices still allocated stay;
with DRAResourceClaimDeviceStatus off (release 1.31) nothing changes unless the old claim
already had device status.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.api.admission.gated_fields import drop_deallocated_status_devices
from services.kube.feature_gates import FeatureGates

Obj = dict[str, Any]


def result(device: str, share: str | None = None) -> Obj:
    out: Obj = {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": device}
    if share is not None:
        out["shareID"] = share
    return out


def entry(device: str, share: str | None = None) -> Obj:
    out: Obj = {"driver": "gpu.example.com", "pool": "node-1", "device": device, "conditions": []}
    if share is not None:
        out["shareID"] = share
    return out


def claim(results: list[Obj] | None, devices: list[Obj] | None) -> Obj:
    status: Obj = {}
    if results is not None:
        status["allocation"] = {"devices": {"results": results}}
    if devices is not None:
        status["devices"] = devices
    return {"metadata": {"name": "c", "namespace": "ns"}, "status": status}


@pytest.mark.parametrize(
    ("old", "new", "kept"),
    [
        pytest.param([result("gpu-0")], None, [], id="deallocated-drops-every-entry"),
        pytest.param([result("gpu-0"), result("gpu-1")], [result("gpu-1")], ["gpu-1"], id="partly-deallocated"),
        pytest.param([result("gpu-0")], [result("gpu-0")], ["gpu-0"], id="still-allocated"),
        pytest.param(None, None, ["gpu-0"], id="never-allocated-entries-stay-for-validation"),
    ],
)
def test_drop_deallocated_status_devices(old: list[Obj] | None, new: list[Obj] | None, kept: list[str]) -> None:
    devices = [entry("gpu-0"), entry("gpu-1")] if old and len(old) == 2 else [entry("gpu-0")]
    before = claim(old, devices)
    after = claim(new, [dict(d) for d in devices])
    drop_deallocated_status_devices(after, before, FeatureGates(release="1.37"))
    assert [d["device"] for d in after["status"]["devices"]] == kept


def test_shares_are_matched_by_share_id() -> None:
    before = claim([result("nic-0", "s1"), result("nic-0", "s2")], [entry("nic-0", "s1"), entry("nic-0", "s2")])
    after = claim([result("nic-0", "s2")], [entry("nic-0", "s1"), entry("nic-0", "s2")])
    drop_deallocated_status_devices(after, before, FeatureGates(release="1.37"))
    assert [d["shareID"] for d in after["status"]["devices"]] == ["s2"]


def test_gate_off_and_not_in_use_changes_nothing() -> None:
    before = claim([result("gpu-0")], None)
    after = claim(None, [entry("gpu-0")])
    drop_deallocated_status_devices(after, before, FeatureGates(release="1.31"))
    assert after["status"]["devices"] == [entry("gpu-0")]
    in_use = claim([result("gpu-0")], [entry("gpu-0")])
    drop_deallocated_status_devices(after, in_use, FeatureGates(release="1.31"))
    assert after["status"]["devices"] == []
