"""Objects as a pre-hub log holds them (1.31 v1alpha3) are hub objects, so old logs load unchanged.

The samples (`tests.support.samples`) are in the storage form; what main
stored before the hub form is the same object as 1.31's v1alpha3 shows it
(`as_stored_before`: stamped v1alpha3, capacity bare), classic DRA fields
included. DeviceClass, ResourceClaim,
ResourceClaimTemplate and PodSchedulingContext decode strictly as the hub
models as they are, and the v1alpha3 → hub conversion returns them untouched.
ResourceSlice is the one exception: 1.31 stores a device's capacity as a bare
quantity and the hub (1.37's v1beta1 layout) as ``{value: ...}``, so a
recorded slice (the samples' and the one today's driver publishes) needs the
v1alpha3 → hub conversion, which wraps capacity and changes nothing else (docs/decisions/api-versions.md).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from services.api.machinery.conversion import from_internal, to_internal, upgrade_stored
from services.api.machinery.conversions.table import GROUP
from services.api.types.resource_hub import HUB_MODELS
from services.driver.inventory import default_inventory
from services.driver.slices import desired_slices
from tests.support import samples


def as_stored_before(hub: dict[str, Any]) -> dict[str, Any]:
    """A storage-form object as a pre-hub main stored it: 1.31's v1alpha3."""
    return from_internal(hub, group=GROUP, kind=hub["kind"], version="v1alpha3")


def _before(sample: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    return lambda: as_stored_before(sample())


AS_STORED: list[tuple[str, Callable[[], dict[str, Any]]]] = [
    ("DeviceClass", _before(samples.device_class)),
    ("ResourceClaim", _before(samples.resource_claim)),
    ("ResourceClaimTemplate", _before(samples.resource_claim_template)),
    ("PodSchedulingContext", _before(samples.pod_scheduling_context)),
]


@pytest.mark.parametrize(("kind", "sample"), AS_STORED, ids=[k for k, _ in AS_STORED])
def test_a_stored_object_is_already_a_hub_object(kind: str, sample: Callable[[], dict[str, Any]]) -> None:
    stored = sample()
    msgspec.convert({**stored, "apiVersion": "resource.k8s.io/v1beta1"}, HUB_MODELS[kind])  # strict
    # Reading it needs no conversion: the v1alpha3 → hub step hands back the very object.
    assert to_internal(stored, group=GROUP, kind=kind, version="v1alpha3") is stored
    # And 1.31 clients read exactly what they read today.
    assert from_internal(stored, group=GROUP, kind=kind, version="v1alpha3") == stored


def test_a_stored_claim_keeps_its_allocation_and_resource_version() -> None:
    stored = as_stored_before(samples.resource_claim())
    hub = to_internal(copy.deepcopy(stored), group=GROUP, kind="ResourceClaim", version="v1alpha3")
    assert hub["status"] == stored["status"]  # allocation, controller, reservedFor, deallocationRequested
    assert hub["metadata"] == stored["metadata"]


def _driver_slice() -> dict[str, Any]:
    # What the driver publishes (services/driver): its default GPU inventory, one slice.
    devices = default_inventory("worker-1", count=3)
    return desired_slices(node="worker-1", driver="gpu.example.com", devices=devices, generation=1)[0]


SLICES: list[tuple[str, Callable[[], dict[str, Any]]]] = [
    ("sample", _before(lambda: samples.resource_slice(devices=4))),
    ("driver", _before(_driver_slice)),
]


@pytest.mark.parametrize(("source", "sample"), SLICES, ids=[s for s, _ in SLICES])
def test_a_stored_slice_needs_only_its_capacity_wrapped(source: str, sample: Callable[[], dict[str, Any]]) -> None:
    stored = sample()
    with pytest.raises(msgspec.ValidationError, match=r"capacity"):
        msgspec.convert(stored, HUB_MODELS["ResourceSlice"])
    hub = to_internal(stored, group=GROUP, kind="ResourceSlice", version="v1alpha3")
    msgspec.convert(hub, HUB_MODELS["ResourceSlice"])
    assert hub["metadata"] == stored["metadata"]
    for before, after in zip(stored["spec"]["devices"], hub["spec"]["devices"], strict=True):
        assert after["basic"]["capacity"] == {k: {"value": v} for k, v in before["basic"]["capacity"].items()}
        assert after["basic"]["attributes"] == before["basic"]["attributes"]
    unwrapped = {**hub["spec"], "devices": stored["spec"]["devices"]}
    assert unwrapped == stored["spec"]
    # Idempotent: an upgraded slice passes through unchanged, so it may be applied to every record.
    assert to_internal(hub, group=GROUP, kind="ResourceSlice", version="v1alpha3") == hub
    assert from_internal(hub, group=GROUP, kind="ResourceSlice", version="v1alpha3") == stored


UPGRADED: list[tuple[str, Callable[[], dict[str, Any]]]] = [
    ("DeviceClass", samples.device_class),
    ("ResourceClaim", samples.resource_claim),
    ("ResourceClaimTemplate", samples.resource_claim_template),
    ("ResourceSlice", lambda: samples.resource_slice(devices=4)),
    ("driver", _driver_slice),
]


@pytest.mark.parametrize(("kind", "sample"), UPGRADED, ids=[k for k, _ in UPGRADED])
def test_the_read_path_upgrades_a_pre_hub_record_to_the_storage_form(
    kind: str, sample: Callable[[], dict[str, Any]]
) -> None:
    hub = sample()
    assert hub["apiVersion"] == "resource.k8s.io/v1beta1"  # what stored records are stamped with now
    old = as_stored_before(hub)
    assert upgrade_stored(old) == hub
    assert upgrade_stored(hub) is hub  # records written since: one comparison, no copy


def test_the_read_path_leaves_pod_scheduling_contexts_and_core_objects_alone() -> None:
    ctx = samples.pod_scheduling_context()
    assert upgrade_stored(ctx) is ctx
    pod = samples.pod()
    assert upgrade_stored(pod) is pod
