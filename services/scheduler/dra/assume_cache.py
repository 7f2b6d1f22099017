"""The claim assume cache: informer claims, overlaid with the scheduler's own newer writes.

After PreBind writes an allocation, the next pod must not hand out the same
device although the informer has not delivered the update yet; and between
Reserve and PreBind an allocation exists only in memory (in flight). This
cache serves the newest known version of each claim — in-flight allocation,
else the version the scheduler assumed after its write, else the informer's —
and keeps an index of every allocated device, so the allocator learns which
devices are taken in O(1) instead of walking all claims for every pod. An
informer version at least as new as an assumed one replaces it (kube's
``assumecache`` "newer than" rule on resourceVersion).

Since 1.37 a device can also be shared: results with a ``shareID`` (consumable
capacity) leave the device to other claims as long as its capacity lasts. The
index keeps the allocator's ``AllocatedState`` split (exclusive devices, shared
devices, consumed capacity per shared device) up to date claim by claim, and a
pool's generation moves on any change of the three.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any, NamedTuple

from services.kube.resourceclaim import allocation, claim_key
from services.kube.structured import AllocatedState

DeviceID = tuple[str, str, str]
Capacity = tuple[tuple[DeviceID, tuple[tuple[str, Fraction], ...]], ...]


class Holding(NamedTuple):
    """What one claim's allocation holds: exclusive devices, shared devices, consumed capacity."""

    devices: frozenset[DeviceID]
    shared: frozenset[DeviceID]
    capacity: Capacity

    def all_devices(self) -> frozenset[DeviceID]:
        return self.devices | self.shared


EMPTY_HOLDING = Holding(frozenset(), frozenset(), ())


def holding(claim: Mapping[str, Any]) -> Holding:
    """The claim's ``AllocatedState`` contribution (admin-access results hold nothing)."""
    alloc = allocation(claim)
    if alloc is None:
        return EMPTY_HOLDING
    results = (alloc.get("devices") or {}).get("results") or ()
    if all(r.get("shareID") is None for r in results):
        # The common case, as AllocatedState.add counts it, without building the capacity sums.
        devices = frozenset(
            (str(r.get("driver", "")), str(r.get("pool", "")), str(r.get("device", "")))
            for r in results
            if not r.get("adminAccess")
        )
        return Holding(devices, frozenset(), ()) if devices else EMPTY_HOLDING
    state = AllocatedState()
    state.add(alloc)
    if not state.devices and not state.shared_devices:
        return EMPTY_HOLDING
    capacity = tuple(sorted((d, tuple(sorted(c.items()))) for d, c in state.capacity.items()))
    return Holding(frozenset(state.devices), frozenset(state.shared_devices), capacity)


def _version(obj: Mapping[str, Any]) -> int:
    rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    return int(rv) if rv.isdigit() else -1


def _uid(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def allocated_device_ids(claim: Mapping[str, Any]) -> frozenset[DeviceID]:
    """Devices a claim holds exclusively; admin-access and shared (``shareID``) results do not count."""
    return holding(claim).devices


class AllocatedDevices:
    """A live ``Container[DeviceID]`` view of the cache's allocated devices."""

    def __init__(self, counts: Counter[DeviceID]) -> None:
        self._counts = counts

    def __contains__(self, item: object) -> bool:
        return self._counts.get(item, 0) > 0  # type: ignore[call-overload]

    def __iter__(self) -> Iterator[DeviceID]:
        return (d for d, n in self._counts.items() if n > 0)

    def __len__(self) -> int:
        return sum(1 for n in self._counts.values() if n > 0)


class ClaimAssumeCache:
    def __init__(self) -> None:
        self._api: dict[str, Mapping[str, Any]] = {}
        self._assumed: dict[str, Mapping[str, Any]] = {}
        self._in_flight: dict[str, Mapping[str, Any]] = {}  # uid -> claim with the reserved allocation
        # key -> uid of in-flight claims the API does not have yet (a pod's extended resource claim)
        self._in_flight_only: dict[str, str] = {}
        self._key_by_uid: dict[str, str] = {}
        self._devices_of: dict[str, Holding] = {}
        self._allocation_of: dict[str, Mapping[str, Any]] = {}  # the allocation each holding was computed from
        self._counts: Counter[DeviceID] = Counter()
        self._shared_counts: Counter[DeviceID] = Counter()
        self._capacity: dict[DeviceID, dict[str, Fraction]] = {}  # shared device -> consumed, summed
        self._pool_generations: dict[tuple[str, str], int] = {}  # (driver, pool) -> changes of its usage
        self._pool_listeners: list[Callable[[tuple[str, str]], None]] = []

    # ------------------------------------------------------------- reads

    def get(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The newest version the scheduler knows (assumed over informer; in-flight not included)."""
        key = f"{namespace}/{name}"
        return self._assumed.get(key) or self._api.get(key)

    def get_api(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self._api.get(f"{namespace}/{name}")

    def list(self) -> list[Mapping[str, Any]]:
        """Every claim in its effective version (in-flight allocation included)."""
        out = []
        for key in self._api.keys() | self._assumed.keys():
            claim = self._effective(key)
            if claim is not None:
                out.append(claim)
        return out

    def allocated_devices(self) -> AllocatedDevices:
        """Exclusively allocated devices (``AllocatedState.devices``), a live view."""
        return AllocatedDevices(self._counts)

    def shared_devices(self) -> AllocatedDevices:
        """Devices with at least one ``shareID`` result (``AllocatedState.shared_devices``), a live view."""
        return AllocatedDevices(self._shared_counts)

    def allocated_capacity(self) -> Mapping[DeviceID, Mapping[str, Fraction]]:
        """Per shared device, the capacity its results consume (``AllocatedState.capacity``), live, read-only."""
        return self._capacity

    def pool_generation(self, driver: str, pool: str) -> int:
        """How often the set of allocated devices in this pool changed (in-flight ones included)."""
        return self._pool_generations.get((driver, pool), 0)

    def pool_generations(self) -> Mapping[tuple[str, str], int]:
        """All pools' generations (read-only; absent means 0), for callers that look up many."""
        return self._pool_generations

    def on_pool_change(self, listener: Callable[[tuple[str, str]], None]) -> None:
        """Call ``listener((driver, pool))`` whenever a pool's generation moves."""
        self._pool_listeners.append(listener)

    def is_assumed(self, namespace: str, name: str) -> bool:
        return f"{namespace}/{name}" in self._assumed

    # ----------------------------------------------------- informer side

    def on_add(self, claim: Mapping[str, Any]) -> None:
        key = claim_key(claim)
        self._api[key] = claim
        self._key_by_uid[_uid(claim)] = key
        assumed = self._assumed.get(key)
        if assumed is not None and (_version(claim) >= _version(assumed) or _uid(assumed) != _uid(claim)):
            del self._assumed[key]
        self._reindex(key)

    on_update = on_add

    def on_delete(self, claim: Mapping[str, Any]) -> None:
        key = claim_key(claim)
        self._api.pop(key, None)
        self._assumed.pop(key, None)
        self._in_flight.pop(_uid(claim), None)
        self._key_by_uid.pop(_uid(claim), None)
        self._reindex(key)

    def observe(self, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        if new is None:
            if old is not None:
                self.on_delete(old)
        else:
            self.on_add(new)

    # ---------------------------------------------------- scheduler side

    def assume(self, claim: Mapping[str, Any], *, created: bool = False) -> None:
        """Record the claim as written by the scheduler (newer than the informer's).

        As kube's ``AssumeCache.Assume``, a claim the informer does not have is
        not assumed: it was deleted while the write was on its way, and an
        assumed copy would hold its devices for ever (nothing would replace
        it). Except a claim the scheduler ``created`` itself (a pod's extended
        resource claim), which the informer may simply not have delivered yet.
        """
        key = claim_key(claim)
        current = self._api.get(key)
        if current is None and not created:
            return  # deleted meanwhile (kube: ErrNotFound, "Claim not stored in assume cache")
        if current is not None and _version(current) >= _version(claim) >= 0:
            return  # the informer is already there
        self._assumed[key] = claim
        self._key_by_uid[_uid(claim)] = key
        self._reindex(key)

    def restore(self, namespace: str, name: str) -> None:
        key = f"{namespace}/{name}"
        if self._assumed.pop(key, None) is not None:
            self._reindex(key)

    def add_in_flight(self, claim: Mapping[str, Any]) -> None:
        uid = _uid(claim)
        key = claim_key(claim)
        self._in_flight[uid] = claim
        self._key_by_uid[uid] = key
        if key not in self._api and key not in self._assumed:
            self._in_flight_only[key] = uid
        self._reindex(key)

    def remove_in_flight(self, uid: str) -> Mapping[str, Any] | None:
        claim = self._in_flight.pop(uid, None)
        if claim is not None:
            key = claim_key(claim)
            if self._in_flight_only.get(key) == uid:
                del self._in_flight_only[key]
            self._reindex(key)
        return claim

    def has_in_flight(self, uid: str) -> bool:
        return uid in self._in_flight

    def in_flight_count(self) -> int:
        return len(self._in_flight)

    # ---------------------------------------------------------- internal

    def _effective(self, key: str) -> Mapping[str, Any] | None:
        claim = self._assumed.get(key) or self._api.get(key)
        if claim is not None:
            in_flight = self._in_flight.get(_uid(claim))
            if in_flight is not None:
                return in_flight
        elif self._in_flight_only:
            only = self._in_flight_only.get(key)
            return self._in_flight.get(only) if only is not None else None
        return claim

    def _reindex(self, key: str) -> None:
        claim = self._effective(key)
        alloc = allocation(claim) if claim is not None else None
        if alloc is not None:
            before = self._allocation_of.get(key)
            if before is not None and (before is alloc or before == alloc):
                self._allocation_of[key] = alloc
                return  # the same devices (most updates of an allocated claim touch other fields)
        old = self._devices_of.pop(key, EMPTY_HOLDING)
        self._allocation_of.pop(key, None)
        new = holding(claim) if claim is not None else EMPTY_HOLDING
        if new.devices or new.shared:
            self._devices_of[key] = new
            assert alloc is not None
            self._allocation_of[key] = alloc
        if old == new:
            return
        _count(self._counts, old.devices, -1)
        _count(self._counts, new.devices, 1)
        _count(self._shared_counts, old.shared, -1)
        _count(self._shared_counts, new.shared, 1)
        self._add_capacity(old.capacity, -1)
        self._add_capacity(new.capacity, 1)
        generations = self._pool_generations
        changed = old.all_devices() ^ new.all_devices()
        if old.capacity != new.capacity or old.shared != new.shared:
            changed = old.all_devices() | new.all_devices()
        for pool_id in {(driver, pool) for driver, pool, _ in changed}:
            generations[pool_id] = generations.get(pool_id, 0) + 1
            for listener in self._pool_listeners:
                listener(pool_id)

    def _add_capacity(self, capacity: Capacity, sign: int) -> None:
        for device, consumed in capacity:
            totals = self._capacity.setdefault(device, {})
            for name, amount in consumed:
                total = totals.get(name, Fraction(0)) + sign * amount
                if total:
                    totals[name] = total
                else:
                    totals.pop(name, None)
            if not totals:
                del self._capacity[device]


def _count(counts: Counter[DeviceID], devices: frozenset[DeviceID], step: int) -> None:
    for device in devices:
        counts[device] += step
        if counts[device] <= 0:
            del counts[device]
