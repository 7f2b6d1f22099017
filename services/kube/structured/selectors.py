"""Cached CEL selector results per device.

Whether a device satisfies a selector depends only on the expression and on
the device as published. The scheduler asks the same question for every node
and every pod, so results are cached by (expression, device identity), where
the identity includes the slice's pool generation and resourceVersion: a
republished device is a new identity. The CEL input (`DeviceView`) for a
device is built once and shared by all expressions.

The cache also keeps, per `Pool`, the flattened list of its devices with
their identities (`DeviceEntry`), so that repeated allocations over the same
pools (a shared `SliceIndex`) do no per-device work before the search.

A `SelectorCache` may be shared across `Allocator` instances (one per pod);
it is bounded and simply starts over when full.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from services.kube.cel import CelRuntimeError, CompiledSelector, DeviceView, device_view, evaluate
from services.kube.structured.pools import DeviceID, Pool

DeviceKey = tuple[str, str, str, int, str, str]
"""(driver, pool, device, pool generation, slice name, slice resourceVersion)."""

DEFAULT_MAX_ENTRIES = 1 << 18


def _slice_identity(slice_: Mapping[str, Any]) -> tuple[str, str, int, str, str]:
    spec = slice_.get("spec") or {}
    pool = spec.get("pool") or {}
    metadata = slice_.get("metadata") or {}
    return (
        str(spec.get("driver", "")),
        str(pool.get("name", "")),
        int(pool.get("generation") or 0),
        str(metadata.get("name", "")),
        str(metadata.get("resourceVersion", "")),
    )


def device_key(slice_: Mapping[str, Any], device_name: str) -> DeviceKey:
    driver, pool, generation, name, version = _slice_identity(slice_)
    return (driver, pool, device_name, generation, name, version)


@dataclass(slots=True, eq=False)
class DeviceEntry:
    """One device of a pool, as the allocator iterates over it."""

    id: DeviceID
    key: DeviceKey
    basic: Mapping[str, Any] | None  # None: a future device type, never selectable
    attributes: Mapping[str, Mapping[str, Any]]
    slice: Mapping[str, Any]
    pool: Pool
    device: Mapping[str, Any]
    special: bool = False
    """The device uses a 1.32+ field the search must look at (taints, counters, sharing, node selection, binding)."""


def pool_devices(pool: Pool) -> list[DeviceEntry]:
    entries: list[DeviceEntry] = []
    for slice_ in pool.slices:
        driver, pool_name, generation, name, version = _slice_identity(slice_)
        per_device = bool((slice_.get("spec") or {}).get("perDeviceNodeSelection"))
        for device in (slice_.get("spec") or {}).get("devices") or ():
            device_name = str(device.get("name", ""))
            basic = device.get("basic")
            attributes = (basic.get("attributes") or {}) if basic is not None else {}
            special = per_device or (
                basic is not None
                and bool(
                    basic.get("taints")
                    or basic.get("consumesCounters")
                    or basic.get("allowMultipleAllocations")
                    or basic.get("bindingConditions")
                    or basic.get("bindsToNode")
                )
            )
            entries.append(
                DeviceEntry(
                    (pool.driver, pool.name, device_name),
                    (driver, pool_name, device_name, generation, name, version),
                    basic,
                    attributes,
                    slice_,
                    pool,
                    device,
                    special,
                )
            )
    return entries


class SelectorCache:
    """Device views and selector results, keyed by device identity."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._views: dict[DeviceKey, DeviceView] = {}
        self._results: dict[tuple[str, DeviceKey], bool | CelRuntimeError] = {}
        # id(pool) -> (pool, its devices); the pool is kept so the id stays unique.
        self._pools: dict[int, tuple[Pool, list[DeviceEntry]]] = {}
        self.evaluations = 0

    def devices(self, pool: Pool) -> list[DeviceEntry]:
        cached = self._pools.get(id(pool))
        if cached is not None and cached[0] is pool:
            return cached[1]
        if len(self._pools) >= self.max_entries:
            self._pools.clear()
        entries = pool_devices(pool)
        self._pools[id(pool)] = (pool, entries)
        return entries

    def view(self, key: DeviceKey, basic: Mapping[str, Any]) -> DeviceView:
        view = self._views.get(key)
        if view is None:
            if len(self._views) >= self.max_entries:
                self._views.clear()
            view = device_view(driver=key[0], attributes=basic.get("attributes"), capacity=basic.get("capacity"))
            self._views[key] = view
        return view

    def matches(self, selector: CompiledSelector, key: DeviceKey, basic: Mapping[str, Any]) -> bool | CelRuntimeError:
        cache_key = (selector.expression, key)
        result = self._results.get(cache_key)
        if result is None:
            if len(self._results) >= self.max_entries:
                self._results.clear()
            self.evaluations += 1
            result = evaluate(selector, self.view(key, basic))
            self._results[cache_key] = result
        return result

    def __len__(self) -> int:
        return len(self._results)
