"""Resource pools as the allocator sees them from one node.

Mirrors ``GatherPools`` in ``k8s.io/dynamic-resource-allocation/structured``:
a pool is the set of ResourceSlices with the same driver and pool name that
are reachable from the node (``nodeName`` equal to the node, ``allNodes``, or
a ``nodeSelector`` matching it). Only slices of the newest pool generation
count; a pool with fewer slices than ``resourceSliceCount`` is *incomplete*,
one in which a device name repeats is *invalid*.

`SliceIndex` sorts the slices once (by node name, cluster-wide with parsed
node selectors) and remembers the pools of each node it was asked about, so
that the scheduler, which asks for every node and every pod, does not rescan
every slice each time. Build a new index when the slices change.

Kubernetes 1.37 (``PoolMode.kube_1_37``) gathers differently, and `SliceIndex`
does both:

* a pool missing slices on this node is complete when the slices of the
  newest generation on *all* nodes add up to ``resourceSliceCount`` (a
  multi-host pool); its devices elsewhere still count for its counters;
  incomplete and invalid pools are kept but never allocated from;
* with ``DRAPartitionableDevices``, slices that hold ``sharedCounters`` are
  the pool's counter sets (a duplicate set name, or a device consuming an
  unknown set or counter, makes the pool invalid), and a slice with
  ``perDeviceNodeSelection`` reaches the node when one of its devices does;
  without the gate, such slices are ignored;
* slices sort by name within a pool, and pools by driver and name, so the
  first fit is deterministic; pools whose devices carry binding conditions
  come last.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from services.kube.node_selectors import NodeSelector, NodeSelectorError

DeviceID = tuple[str, str, str]
"""(driver, pool, device): a device's identity in allocation results."""


class PoolError(ValueError):
    """Slices that cannot be interpreted (for example an unparsable node selector)."""


@dataclass(slots=True)
class Pool:
    driver: str
    name: str
    generation: int
    slices: list[Mapping[str, Any]] = field(default_factory=list)
    is_incomplete: bool = False
    is_invalid: bool = False
    invalid_reason: str = ""
    counter_sets: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    """1.37: counter set name -> ``counters`` (name -> ``{value}``), from ``sharedCounters``."""
    slices_elsewhere: list[Mapping[str, Any]] = field(default_factory=list)
    """1.37: slices of a complete multi-host pool that do not reach this node (their devices use counters too)."""

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


class PoolMode(NamedTuple):
    """How pools are gathered: Kubernetes 1.31 or 1.37, with or without ``DRAPartitionableDevices``."""

    kube_1_37: bool = False
    partitionable_devices: bool = False
    binding_conditions: bool = False


MODE_1_31 = PoolMode()


def _spec(slice_: Mapping[str, Any]) -> Mapping[str, Any]:
    return slice_.get("spec") or {}


def _slice_name(slice_: Mapping[str, Any]) -> str:
    return str((slice_.get("metadata") or {}).get("name", ""))


def _add_slice(pools: dict[tuple[str, str], Pool], slice_: Mapping[str, Any]) -> None:
    spec = _spec(slice_)
    pool_spec = spec.get("pool") or {}
    key = (str(spec.get("driver", "")), str(pool_spec.get("name", "")))
    generation = int(pool_spec.get("generation") or 0)
    pool = pools.get(key)
    if pool is None:
        pools[key] = Pool(key[0], key[1], generation, [slice_])
        return
    if generation < pool.generation:
        return  # Out-dated.
    if generation > pool.generation:
        # Newer, replaces all old slices.
        pool.generation = generation
        pool.slices = []
    pool.slices.append(slice_)


def _finish(pools: Iterable[Pool]) -> list[Pool]:
    result: list[Pool] = []
    for pool in pools:
        count = int((_spec(pool.slices[0]).get("pool") or {}).get("resourceSliceCount") or 0)
        pool.is_incomplete = len(pool.slices) != count
        seen: set[str] = set()
        for slice_ in pool.slices:
            for device in _spec(slice_).get("devices") or ():
                name = str(device.get("name", ""))
                if name in seen and not pool.is_invalid:
                    pool.is_invalid = True
                    pool.invalid_reason = f"duplicate device name {name}"
                seen.add(name)
        result.append(pool)
    return result


def _device_basic(device: Mapping[str, Any]) -> Mapping[str, Any]:
    return device.get("basic") or {}


def device_node_matches(device: Mapping[str, Any], node: Mapping[str, Any] | None) -> bool:
    """``NodeMatches`` for one device of a ``perDeviceNodeSelection`` slice.

    Raises `PoolError` for a node selector that cannot be parsed.
    """
    basic = _device_basic(device)
    node_name = basic.get("nodeName")
    if node_name:
        return node is not None and str((node.get("metadata") or {}).get("name", "")) == node_name
    if basic.get("allNodes"):
        return True
    selector = basic.get("nodeSelector")
    if selector is not None:
        try:
            return NodeSelector.parse(selector).matches(node)
        except NodeSelectorError as err:
            raise PoolError(f"failed to perform node selection for device {device.get('name', '')}: {err}") from None
    return False


def _has_binding_conditions(pool: Pool) -> bool:
    return any(
        _device_basic(device).get("bindingConditions") is not None
        for slice_ in pool.slices
        for device in _spec(slice_).get("devices") or ()
    )


def _build_pool(pool: Pool, all_for_pool: list[Mapping[str, Any]] | None, mode: PoolMode) -> Pool:
    """1.37's ``buildPool``: split counter slices off, validate names and counter references."""
    ordered = sorted(pool.slices, key=_slice_name)
    counter_slices: list[Mapping[str, Any]] = []
    device_slices: list[Mapping[str, Any]] = []
    for slice_ in ordered:
        if mode.partitionable_devices and _spec(slice_).get("sharedCounters"):
            counter_slices.append(slice_)
        else:
            device_slices.append(slice_)
    elsewhere: list[Mapping[str, Any]] = []
    if all_for_pool is not None and len(ordered) < len(all_for_pool):
        here = {_slice_name(s) for s in ordered}
        for slice_ in all_for_pool:
            if _slice_name(slice_) in here:
                continue
            if mode.partitionable_devices and _spec(slice_).get("sharedCounters"):
                counter_slices.append(slice_)
            else:
                elsewhere.append(slice_)
    pool.slices = device_slices
    seen: set[str] = set()
    for slice_ in device_slices:
        for device in _spec(slice_).get("devices") or ():
            name = str(device.get("name", ""))
            if name in seen:
                return _invalid(pool, f"duplicate device name {name}")
            seen.add(name)
    if not mode.partitionable_devices:
        return pool
    counter_sets: dict[str, Mapping[str, Any]] = {}
    for slice_ in counter_slices:
        for counter_set in _spec(slice_).get("sharedCounters") or ():
            name = str(counter_set.get("name", ""))
            if name in counter_sets:
                return _invalid(pool, f"duplicate counter set name {name}")
            counter_sets[name] = counter_set.get("counters") or {}
    for slice_ in device_slices + elsewhere:
        for device in _spec(slice_).get("devices") or ():
            for consumption in _device_basic(device).get("consumesCounters") or ():
                set_name = str(consumption.get("counterSet", ""))
                counters = counter_sets.get(set_name)
                if counters is None:
                    return _invalid(pool, f"counter set {set_name} not found")
                for counter in consumption.get("counters") or {}:
                    if counter not in counters:
                        return _invalid(pool, f"counter {counter} not found in counter set {set_name}")
    pool.counter_sets = counter_sets
    pool.slices_elsewhere = elsewhere
    return pool


def _invalid(pool: Pool, reason: str) -> Pool:
    pool.is_invalid = True
    pool.invalid_reason = reason
    return pool


class SliceIndex:
    """Slices indexed for repeated per-node pool gathering."""

    def __init__(self, slices: Iterable[Mapping[str, Any]]) -> None:
        self._by_node: dict[str, list[tuple[int, Mapping[str, Any]]]] = {}
        self._all_nodes: list[tuple[int, Mapping[str, Any]]] = []
        self._selected: list[tuple[int, Mapping[str, Any], NodeSelector | str]] = []
        self._per_device: list[tuple[int, Mapping[str, Any]]] = []
        self._by_pool: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        self._pools: dict[Any, list[Pool]] = {}
        for position, slice_ in enumerate(slices):
            spec = _spec(slice_)
            pool_spec = spec.get("pool") or {}
            self._by_pool.setdefault((str(spec.get("driver", "")), str(pool_spec.get("name", ""))), []).append(slice_)
            node_name = spec.get("nodeName")
            if node_name:
                self._by_node.setdefault(str(node_name), []).append((position, slice_))
            elif spec.get("allNodes"):
                self._all_nodes.append((position, slice_))
            elif spec.get("nodeSelector") is not None:
                parsed: NodeSelector | str
                try:
                    parsed = NodeSelector.parse(spec["nodeSelector"])
                except NodeSelectorError as err:
                    # Reported when a node asks, as Kubernetes does.
                    parsed = f"node selector in resource slice {_slice_name(slice_)}: {err}"
                self._selected.append((position, slice_, parsed))
            elif spec.get("perDeviceNodeSelection"):
                self._per_device.append((position, slice_))
            # Anything else is a future extension and is skipped.

    def pools_for(self, node: Mapping[str, Any] | None, mode: PoolMode = MODE_1_31) -> list[Pool]:
        """The pools reachable from a node (None: only cluster-wide slices with allNodes).

        The same node (name and labels) gets the same `Pool` objects back; treat them as read-only.
        """
        metadata = (node or {}).get("metadata") or {}
        cache_key: Any = mode
        if node is not None:
            labels = metadata.get("labels") or {}
            cache_key = (metadata.get("name", ""), frozenset(labels.items()), mode)
        pools = self._pools.get(cache_key)
        if pools is None:
            pools = self._gather(node, mode)
            self._pools[cache_key] = pools
        return pools

    def _gather(self, node: Mapping[str, Any] | None, mode: PoolMode) -> list[Pool]:
        node_name = str(((node or {}).get("metadata") or {}).get("name", "")) if node else ""
        chosen: list[tuple[int, Mapping[str, Any]]] = list(self._by_node.get(node_name, ())) if node_name else []
        chosen += self._all_nodes
        for position, slice_, selector in self._selected:
            if isinstance(selector, str):
                raise PoolError(selector)
            if selector.matches(node):
                chosen.append((position, slice_))
        if mode.partitionable_devices:
            for position, slice_ in self._per_device:
                if any(device_node_matches(d, node) for d in _spec(slice_).get("devices") or ()):
                    chosen.append((position, slice_))
        else:
            chosen = [(p, s) for p, s in chosen if not _spec(s).get("sharedCounters")] if mode.kube_1_37 else chosen
        chosen.sort(key=lambda item: item[0])
        pools: dict[tuple[str, str], Pool] = {}
        for _, slice_ in chosen:
            _add_slice(pools, slice_)
        if not mode.kube_1_37:
            return _finish(pools.values())
        return self._finish_1_37(pools, mode)

    def _finish_1_37(self, pools: dict[tuple[str, str], Pool], mode: PoolMode) -> list[Pool]:
        ready: list[Pool] = []
        last: list[Pool] = []
        for key, pool in pools.items():
            count = int((_spec(pool.slices[0]).get("pool") or {}).get("resourceSliceCount") or 0)
            all_for_pool: list[Mapping[str, Any]] | None = None
            if len(pool.slices) != count:
                all_for_pool = []
                obsolete = False
                for slice_ in self._by_pool.get(key, ()):
                    generation = int((_spec(slice_).get("pool") or {}).get("generation") or 0)
                    if generation == pool.generation:
                        all_for_pool.append(slice_)
                    elif generation > pool.generation:
                        obsolete = True
                        break
                if obsolete:
                    continue
                if len(all_for_pool) != count:
                    ready.append(Pool(pool.driver, pool.name, pool.generation, is_incomplete=True))
                    continue
            built = _build_pool(pool, all_for_pool, mode)
            (last if mode.binding_conditions and _has_binding_conditions(built) else ready).append(built)
        ready.sort(key=lambda p: (p.driver, p.name))
        last.sort(key=lambda p: (p.driver, p.name))
        return ready + last


def gather_pools(
    slices: Iterable[Mapping[str, Any]], node: Mapping[str, Any] | None, mode: PoolMode = MODE_1_31
) -> list[Pool]:
    """All pools with devices accessible from ``node`` (``GatherPools``).

    Raises `PoolError` for a slice whose node selector cannot be parsed.
    """
    return SliceIndex(slices).pools_for(node, mode)
