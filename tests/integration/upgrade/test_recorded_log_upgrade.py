"""A log recorded by an older draplane loads with today's code: same objects, resourceVersions and allocations.

The fixture (``recorded-log/``, README there) is a real embedded log written
by the code before issue 14 changed how resource.k8s.io objects are stored:
1.31 v1alpha3 objects, a slice's capacity as a bare quantity, a template
claim allocated by the scheduler, a classic-DRA claim allocated by the
driver's control-plane controller and its PodSchedulingContext.
``expected.json`` holds every object as that code read it.

The test runs today's stack (apiserver with its committer, controller-manager,
scheduler, the classic controller; no simulated node, so nothing runs pods)
on a copy of the log and checks:

- every recorded object is served as recorded, compared through the API
  versions it was written in (resource.k8s.io/v1alpha3, core v1), with the
  same resourceVersion;
- the slice's capacity, as stored, still holds the recorded quantities;
- nothing started on the log reallocates or rewrites a recorded object: a new
  pod is scheduled on the old state, gets a device no recorded claim holds,
  and the records written after the fixture's end touch none of its objects.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from services.bus.port import Bus
from services.kube.feature_gates import FeatureGates
from services.runtime.client import Client
from services.stack import BOOTSTRAP_USER, LocalStack, StackConfig
from tests.support.eventually import eventually
from tests.support.upgrade_log import EXPECTED_FILE, GATES, LOG_FILE, NS, RG, pod
from topics.declarations import OBJECTS
from topics.envelope import split_key

FIXTURE = Path(__file__).parent / "recorded-log"
EXPECTED: dict[str, Any] = orjson.loads((FIXTURE / EXPECTED_FILE).read_bytes())
RECORDED: dict[str, dict[str, Any]] = EXPECTED["objects"]
END_OFFSET: int = EXPECTED["end_offset"]


def recorded(resource: str) -> dict[str, dict[str, Any]]:
    """The recorded objects of one resource.k8s.io resource (or core resource), by name."""
    out: dict[str, dict[str, Any]] = {}
    for key, obj in RECORDED.items():
        group, plural, _, name = split_key(key)
        if plural == resource and group in (RG, "core"):
            out[name] = obj
    return out


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[LocalStack]:
    data = tmp_path / "d"
    data.mkdir()
    shutil.copyfile(FIXTURE / LOG_FILE, data / LOG_FILE)
    config = StackConfig(
        bus_url=f"sqlite:///{data / LOG_FILE}", data_dir=data, port=0, nodes=0, gates=FeatureGates.parse(GATES)
    )
    running = LocalStack(config)
    try:
        await running.start()
        await running.wait_ready()
        yield running
    finally:
        await running.stop()


@pytest.fixture
async def admin(stack: LocalStack) -> AsyncIterator[Client]:
    assert stack.bus is not None and stack.informer is not None
    client = Client(stack.bus, user=BOOTSTRAP_USER, informer=stack.informer, timeout=30.0)
    await client.start()
    yield client
    await client.close()


def path_of(key: str, obj: dict[str, Any]) -> str | None:
    """The URL of a recorded object in the API version it was recorded in; None for objects no API serves."""
    group, plural, namespace, name = split_key(key)
    if group not in ("core", RG):
        return None
    prefix = f"/api/{obj['apiVersion']}" if group == "core" else f"/apis/{obj['apiVersion']}"
    scope = f"/namespaces/{namespace}" if namespace else ""
    return f"{prefix}{scope}/{plural}/{name}"


def test_the_fixture_holds_what_the_upgrade_must_carry() -> None:
    """The recording has every kind the test is about, in the 1.31 form (else the test proves little)."""
    assert {o["apiVersion"] for o in recorded("resourceclaims").values()} == {"resource.k8s.io/v1alpha3"}
    (slice_,) = recorded("resourceslices").values()
    capacities = [d["basic"]["capacity"] for d in slice_["spec"]["devices"]]
    assert capacities and all(isinstance(q, str) for c in capacities for q in c.values()), capacities
    claims = recorded("resourceclaims")
    assert claims["classic"]["spec"]["controller"] == "gpu.example.com"
    assert claims["classic"]["status"]["allocation"]["controller"] == "gpu.example.com"
    assert claims["classic-held"]["spec"]["controller"] == "gpu.example.com" and "status" not in claims["classic-held"]
    generated = [c for n, c in claims.items() if n.startswith("template-user-")]
    assert len(generated) == 1 and generated[0]["status"]["allocation"]["devices"]["results"]
    assert all(claims[n]["status"]["reservedFor"] for n in claims if n != "classic-held")
    assert recorded("podschedulingcontexts")["classic-held"]["status"]["resourceClaims"][0]["unsuitableNodes"]
    assert set(recorded("resourceclaimtemplates")) == {"single-gpu"}
    assert set(recorded("deviceclasses")) == {"gpu.example.com"}


async def test_every_recorded_object_is_served_as_recorded(stack: LocalStack) -> None:
    served: dict[str, Any] = {}
    async with aiohttp.ClientSession(stack.url) as http:
        for key, obj in RECORDED.items():
            path = path_of(key, obj)
            if path is None:
                continue
            async with http.get(path) as response:
                assert response.status == 200, (path, await response.text())
                served[key] = orjson.loads(await response.read())
    assert set(served) >= {k for k in RECORDED if split_key(k)[0] == RG}
    for key, obj in served.items():
        assert obj == RECORDED[key], key


async def test_resource_versions_and_allocations_are_the_recorded_ones(stack: LocalStack, admin: Client) -> None:
    for key, expected in RECORDED.items():
        group, plural, namespace, name = split_key(key)
        if group not in ("core", RG):
            continue
        current = admin.get("" if group == "core" else group, plural, namespace, name)
        assert current is not None, key
        assert current["metadata"]["resourceVersion"] == expected["metadata"]["resourceVersion"], key
        assert current["metadata"]["uid"] == expected["metadata"]["uid"], key
        if plural == "resourceclaims" and "status" in expected:
            assert current["status"]["allocation"]["devices"] == expected["status"]["allocation"]["devices"], key
            assert current["status"]["reservedFor"] == expected["status"]["reservedFor"], key


def quantity(value: Any) -> Any:
    """A capacity value as 1.31 stores it (a bare quantity) or as every later version does (``{value}``)."""
    return value["value"] if isinstance(value, dict) else value


async def test_slice_capacity_as_stored_holds_the_recorded_quantities(admin: Client) -> None:
    for name, expected in recorded("resourceslices").items():
        stored = admin.get(RG, "resourceslices", "", name)
        assert stored is not None, name
        want = {d["name"]: d["basic"]["capacity"] for d in expected["spec"]["devices"]}
        have = {
            d["name"]: {k: quantity(v) for k, v in d["basic"]["capacity"].items()} for d in stored["spec"]["devices"]
        }
        assert have == want, name


def held(claims: dict[str, dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {
        (r["driver"], r["pool"], r["device"])
        for c in claims.values()
        for r in ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", [])
    }


async def test_components_on_the_old_log_rewrite_nothing_and_allocate_around_it(
    stack: LocalStack, admin: Client
) -> None:
    created = await admin.create("", "pods", pod("after-upgrade", {"resourceClaimTemplateName": "single-gpu"}))

    def allocated_claim() -> dict[str, Any] | None:
        current = admin.get("", "pods", NS, "after-upgrade")
        statuses = ((current or {}).get("status") or {}).get("resourceClaimStatuses") or []
        if not statuses or not (current or {}).get("spec", {}).get("nodeName"):
            return None
        claim = admin.get(RG, "resourceclaims", NS, statuses[0]["resourceClaimName"])
        status = (claim or {}).get("status") or {}
        return claim if status.get("allocation") and status.get("reservedFor") else None

    claim = await eventually(allocated_claim, what="the new pod bound with its claim allocated", timeout=60)
    assert claim["status"]["reservedFor"][0]["uid"] == created["metadata"]["uid"]
    new_devices = held({"new": claim})
    assert new_devices and new_devices.isdisjoint(held(recorded("resourceclaims"))), new_devices

    await admin.drain_earlier_requests()
    assert stack.bus is not None
    touched = await keys_written_since(stack.bus, END_OFFSET)
    assert touched, "the new pod's records"
    assert touched.isdisjoint(RECORDED), sorted(touched & set(RECORDED))


async def keys_written_since(bus: Bus, start: int) -> set[str]:
    end = await bus.end_offset(OBJECTS)
    consumer = await bus.consumer(OBJECTS, start=start)
    keys: set[str] = set()
    try:
        while consumer.position() < end:
            for record in await consumer.getmany(timeout_ms=200):
                if record.value is not None and record.key is not None:
                    keys.add(record.key.decode())
    finally:
        await consumer.close()
    return keys
