"""Driver profiles: which devices a simulated node publishes for each demo, chosen by flags.

Why this module exists: dra-example-driver's demos need nodes of different
kinds — plain GPUs, GPUs split into partitions that draw on one counter set
per GPU, GPUs or NICs that several claims share (``allowMultipleAllocations``
with a ``requestPolicy`` on their capacity), devices that carry binding
conditions, devices tainted by their driver. A `DriverProfile` says which; its
`resources` builds the pool's devices and counter sets in the storage form of
resource.k8s.io (devices under ``basic``, docs/decisions/api-versions.md),
which the slice publisher splits into slices. The numbers are the example
driver's (``internal/profiles/gpu`` and ``internal/profiles/net``): 80Gi of
memory and 100 of compute per GPU, split evenly among the partitions; a NIC
has 100 ``vfs`` (one per allocation) and 100G of ingress and egress bandwidth,
1G by default per allocation, 100M to 100G in steps of 1M.
Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from services.driver.inventory import (
    DEFAULT_DRIVER_VERSION,
    DEFAULT_MODEL,
    InventoryError,
    canonical_quantity,
    default_inventory,
    gpu_uuid,
)
from services.kube.quantity import parse_quantity

Obj = dict[str, Any]

GPU = "gpu"
NET = "net"
PROFILES = (GPU, NET)
DEFAULT_DRIVERS = {GPU: "gpu.example.com", NET: "net.example.com"}

GPU_MEMORY = "80Gi"
GPU_COMPUTE = "100"
NIC_MODEL = "LATEST-NET-MODEL"
NIC_BANDWIDTH = "100G"
BINDING_CONDITION = "BindingConditions"  # the example driver's condition names
BINDING_FAILURE_CONDITION = "BindingFailureConditions"
TAINT_EFFECTS = ("None", "NoSchedule", "NoExecute")
HEALTH_VALUES = ("Healthy", "Unhealthy", "Unknown")


@dataclass(frozen=True)
class DeviceTaintSpec:
    """A taint the driver puts on one of its devices (``--device-taint gpu-0=key=value:NoExecute``)."""

    device: str
    key: str
    value: str
    effect: str

    def to_wire(self) -> Obj:
        taint: Obj = {"key": self.key, "effect": self.effect}
        if self.value:
            taint["value"] = self.value
        return taint


def parse_device_taint(text: str) -> DeviceTaintSpec:
    """``<device>=<key>[=<value>]:<effect>``, as kubectl taint writes a taint after the device name."""
    device, sep, rest = text.partition("=")
    body, colon, effect = rest.rpartition(":")
    if not device or not sep or not colon or not body:
        raise InventoryError(f"a device taint is <device>=<key>[=<value>]:<effect>, got {text!r}")
    if effect not in TAINT_EFFECTS:
        raise InventoryError(f"device taint {text!r}: effect must be one of {', '.join(TAINT_EFFECTS)}")
    key, _, value = body.partition("=")
    return DeviceTaintSpec(device, key, value, effect)


def parse_device_health(text: str) -> tuple[str, str]:
    """``<device>=<Healthy|Unhealthy|Unknown>``."""
    device, sep, health = text.partition("=")
    if not device or not sep or health not in HEALTH_VALUES:
        raise InventoryError(f"a device health is <device>=<{'|'.join(HEALTH_VALUES)}>, got {text!r}")
    return device, health


@dataclass(frozen=True)
class PoolResources:
    """One node's pool: devices, and counter sets (published in a slice of their own since 1.35)."""

    devices: list[Obj]
    shared_counters: list[Obj] = field(default_factory=list)


@dataclass(frozen=True)
class DriverProfile:
    """What a simulated node's driver publishes (see the module docstring)."""

    kind: str = GPU
    count: int = 8
    partitions: int = 0
    allow_multiple_allocations: bool = False
    binding_conditions: bool = False
    binds_to_node: bool = False
    taints: tuple[DeviceTaintSpec, ...] = ()
    health: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in PROFILES:
            raise InventoryError(f"unknown driver profile {self.kind!r}: one of {', '.join(PROFILES)}")
        if self.count < 0 or self.partitions < 0:
            raise InventoryError("the number of devices and partitions must not be negative")
        if self.partitions and self.kind != GPU:
            raise InventoryError("--gpu-partitions needs the gpu profile")

    @property
    def default_driver(self) -> str:
        return DEFAULT_DRIVERS[self.kind]

    @property
    def plain(self) -> bool:
        """Whether this is the default profile: dra-example-driver's eight plain GPUs, nothing else."""
        return self == DriverProfile(count=self.count)

    def device_health(self) -> dict[str, str]:
        """Health per device name that differs from Healthy."""
        return dict(self.health)

    def resources(self, node: str) -> PoolResources:
        """The devices and counter sets of ``node``'s pool."""
        if self.kind == NET:
            pool = PoolResources([nic_device(i, node=node) for i in range(self.count)])
        elif self.partitions:
            pool = partitioned_gpus(node, count=self.count, partitions=self.partitions)
        else:
            # The example driver's GPUs today: memory and compute (the default inventory has memory only).
            pool = PoolResources(
                [
                    {**d, "basic": {**d["basic"], "capacity": _counters(GPU_MEMORY, GPU_COMPUTE)}}
                    for d in default_inventory(node, count=self.count)
                ]
            )
        return self.decorate(pool)

    def decorate(self, pool: PoolResources) -> PoolResources:
        """Apply the flags that add to any device: shared, binding conditions, taints."""
        names = {d["name"] for d in pool.devices}
        for taint in self.taints:
            if taint.device not in names:
                raise InventoryError(f"device taint names device {taint.device!r}, which this node does not have")
        devices = []
        for device in pool.devices:
            basic = dict(device.get("basic") or {})
            if self.allow_multiple_allocations and self.kind == GPU:
                basic["allowMultipleAllocations"] = True
                basic["capacity"] = {
                    name: with_range_policy(cap, step="1Gi" if name == "memory" else "1")
                    for name, cap in (basic.get("capacity") or {}).items()
                }
            if self.binding_conditions:
                basic["bindingConditions"] = [BINDING_CONDITION]
                basic["bindingFailureConditions"] = [BINDING_FAILURE_CONDITION]
                if self.binds_to_node:
                    basic["bindsToNode"] = True
            taints = [t.to_wire() for t in self.taints if t.device == device["name"]]
            if taints:
                basic["taints"] = taints
            devices.append({**device, "basic": basic})
        return PoolResources(devices, pool.shared_counters)


def with_range_policy(capacity: Obj, *, step: str) -> Obj:
    """The example driver's policy for a shared GPU's capacity: default all, ``step``..all in steps of ``step``."""
    value = canonical_quantity(capacity["value"])
    return {
        "value": value,
        "requestPolicy": {"default": value, "validRange": {"min": step, "max": value, "step": step}},
    }


def _gpu_attributes(node: str, index: int) -> Obj:
    return {
        "index": {"int": index},
        "uuid": {"string": gpu_uuid(node, index)},
        "model": {"string": DEFAULT_MODEL},
        "driverVersion": {"version": DEFAULT_DRIVER_VERSION},
    }


def _counters(memory: str, compute: str) -> Obj:
    return {"memory": {"value": canonical_quantity(memory)}, "compute": {"value": canonical_quantity(compute)}}


def counter_set_name(index: int) -> str:
    return f"gpu-{index}-counters"


def partitioned_gpus(node: str, *, count: int, partitions: int) -> PoolResources:
    """Per GPU: a counter set, ``partitions`` partition devices and one full-GPU device drawing on it."""
    memory = parse_quantity(GPU_MEMORY)
    compute = parse_quantity(GPU_COMPUTE)
    memory_bytes = memory.int_value // partitions
    # BinarySI like the example driver's resource.NewQuantity(..., BinarySI): 80Gi / 4 is 20Gi.
    part_memory = f"{memory_bytes // 1024}Ki" if memory_bytes % 1024 == 0 else str(memory_bytes)
    part_compute = str(compute.int_value // partitions)
    devices: list[Obj] = []
    counter_sets: list[Obj] = []
    for i in range(count):
        name = counter_set_name(i)
        counter_sets.append({"name": name, "counters": _counters(GPU_MEMORY, GPU_COMPUTE)})
        attrs = _gpu_attributes(node, i)
        for j in range(partitions):
            devices.append(
                {
                    "name": f"gpu-{i}-partition-{j}",
                    "basic": {
                        "attributes": {**attrs, "partition": {"int": j}, "partitionable": {"bool": True}},
                        "capacity": _counters(part_memory, part_compute),
                        "consumesCounters": [{"counterSet": name, "counters": _counters(part_memory, part_compute)}],
                    },
                }
            )
        devices.append(
            {
                "name": f"gpu-{i}-full",
                "basic": {
                    "attributes": {**attrs, "partitionable": {"bool": True}, "full": {"bool": True}},
                    "capacity": _counters(GPU_MEMORY, GPU_COMPUTE),
                    "consumesCounters": [{"counterSet": name, "counters": _counters(GPU_MEMORY, GPU_COMPUTE)}],
                },
            }
        )
    return PoolResources(devices, counter_sets)


def nic_device(index: int, *, node: str) -> Obj:
    """One shared NIC of the net profile."""
    bandwidth = {
        "value": canonical_quantity(NIC_BANDWIDTH),
        "requestPolicy": {
            "default": canonical_quantity("1G"),
            "validRange": {
                "min": canonical_quantity("100M"),
                "max": canonical_quantity(NIC_BANDWIDTH),
                "step": canonical_quantity("1M"),
            },
        },
    }
    return {
        "name": f"nic-{index}",
        "basic": {
            "allowMultipleAllocations": True,
            "attributes": {
                "index": {"int": index},
                "uuid": {"string": gpu_uuid(node, 1000 + index).replace("gpu-", "net-", 1)},
                "model": {"string": NIC_MODEL},
                "driverVersion": {"version": DEFAULT_DRIVER_VERSION},
            },
            "capacity": {
                "vfs": {"value": "100", "requestPolicy": {"default": "1", "validValues": ["1"]}},
                "ingressBandwidth": bandwidth,
                "egressBandwidth": dict(bandwidth),
            },
        },
    }


def nic_network_data(device: str, *, node: str, share: int) -> Obj:
    """The ``networkData`` a NIC allocation reports: an interface per share, a stable address per node."""
    index = int(device.rsplit("-", 1)[-1]) if device.rsplit("-", 1)[-1].isdigit() else 0
    node_octet = sum(node.encode()) % 250 + 1
    return {
        "interfaceName": f"net{index}s{share}",
        "ips": [f"10.{100 + index}.{node_octet}.{share % 250 + 2}/24"],
        "hardwareAddress": f"02:00:{index:02x}:{node_octet:02x}:{(share >> 8) & 0xFF:02x}:{share & 0xFF:02x}",
    }


def profile_names() -> Sequence[str]:
    return PROFILES


SPEC_FLAGS = {
    "shared": "allow_multiple_allocations",
    "allow-multiple-allocations": "allow_multiple_allocations",
    "binding-conditions": "binding_conditions",
    "binds-to-node": "binds_to_node",
}


def parse_profile_spec(text: str) -> tuple[str, DriverProfile]:
    """``draplane up --driver-profile``: ``KIND[,OPTION...]`` → (driver name, profile).

    Options: ``partitions=N``, ``count=N``, ``shared`` (allowMultipleAllocations),
    ``binding-conditions``, ``binds-to-node``, ``driver=NAME``,
    ``taint=DEVICE=KEY[=VALUE]:EFFECT`` and ``health=DEVICE=STATE`` (both repeatable).
    """
    kind, *options = [part.strip() for part in text.split(",")]
    fields: dict[str, Any] = {"kind": kind}
    taints: list[DeviceTaintSpec] = []
    health: list[tuple[str, str]] = []
    driver = ""
    for option in options:
        name, _, value = option.partition("=")
        if name in SPEC_FLAGS and not value:
            fields[SPEC_FLAGS[name]] = True
        elif name in ("partitions", "count") and value.isdigit():
            fields[name] = int(value)
        elif name == "driver" and value:
            driver = value
        elif name == "taint" and value:
            taints.append(parse_device_taint(value))
        elif name == "health" and value:
            health.append(parse_device_health(value))
        else:
            raise InventoryError(f"driver profile {text!r}: unknown option {option!r}")
    if kind not in PROFILES:
        raise InventoryError(f"unknown driver profile {kind!r}: one of {', '.join(PROFILES)}")
    profile = DriverProfile(**fields, taints=tuple(taints), health=tuple(health))
    return driver or profile.default_driver, profile
