"""What a driver publishes: the YAML inventory format and dra-example-driver's default GPUs.

Why this module exists: without real hardware a driver still needs devices to
publish, and tests and demos need them to be the same on every run. The
default inventory is dra-example-driver's: eight GPUs ``gpu-0`` … ``gpu-7``
with an ``index``, a ``uuid`` derived from the node name (so two nodes never
share one and a restart keeps it), ``model: LATEST-GPU-MODEL``,
``driverVersion: 1.0.0`` and ``memory: 80Gi`` of capacity.

An inventory file lists devices in the ResourceSlice wire form, with a
shorthand for attributes::

    devices:
    - name: gpu-0
      attributes:
        index: 0                        # a YAML int is an `int` attribute
        model: LATEST-GPU-MODEL         # a YAML string is a `string` attribute
        ecc: true                       # a YAML bool is a `bool` attribute
        driverVersion: {version: 1.0.0} # versions (and anything else) typed explicitly
      capacity:
        memory: 80Gi                    # or {value: 80Gi}, as 1.32+ write it

Devices come out in the storage form of resource.k8s.io Devices
(``{"name", "basic": {"attributes", "capacity": {"memory": {"value": "80Gi"}}}}``,
docs/decisions/api-versions.md), validated with the API's own ResourceSlice
rules and with capacities in Kubernetes' canonical quantity form, so a
published slice compares equal to what the apiserver stores.
Everything here is pure.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from services.api.admission.validation.resource_slice import validate_device
from services.kube.quantity import wire_quantity
from services.kube.resource_limits import LIMITS_1_37

Device = dict[str, Any]

DEFAULT_GPU_COUNT = 8
DEFAULT_MODEL = "LATEST-GPU-MODEL"
DEFAULT_DRIVER_VERSION = "1.0.0"
DEFAULT_MEMORY = "80Gi"

# A fixed namespace, so uuid5 over (node, index) is the same on every run and every host.
GPU_UUID_NAMESPACE = uuid.UUID("6f1d3c0e-9a5b-4d7e-8c2f-2b7a4e5d9c10")

ATTRIBUTE_TYPES = ("int", "bool", "string", "version")


class InventoryError(ValueError):
    """An inventory file that cannot be published; ``str()`` says where and why."""


def gpu_uuid(node: str, index: int) -> str:
    """The deterministic ``uuid`` attribute of GPU ``index`` on ``node`` (``gpu-<uuid>`` like dra-example-driver)."""
    return f"gpu-{uuid.uuid5(GPU_UUID_NAMESPACE, f'{node}/{index}')}"


def gpu_device(
    index: int,
    *,
    uuid_value: str,
    model: str = DEFAULT_MODEL,
    driver_version: str = DEFAULT_DRIVER_VERSION,
    memory: str = DEFAULT_MEMORY,
) -> Device:
    """One GPU in wire form, with dra-example-driver's attributes."""
    return {
        "name": f"gpu-{index}",
        "basic": {
            "attributes": {
                "index": {"int": index},
                "uuid": {"string": uuid_value},
                "model": {"string": model},
                "driverVersion": {"version": driver_version},
            },
            "capacity": {"memory": {"value": canonical_quantity(memory)}},
        },
    }


def default_inventory(node: str, *, count: int = DEFAULT_GPU_COUNT) -> list[Device]:
    """dra-example-driver's GPUs for ``node``: ``gpu-0`` … ``gpu-<count-1>``."""
    if count < 0:
        raise InventoryError(f"the number of devices must not be negative, got {count}")
    return [gpu_device(i, uuid_value=gpu_uuid(node, i)) for i in range(count)]


def canonical_quantity(value: Any) -> str:
    """Kubernetes' canonical serialization of a quantity (``81920Mi`` → ``80Gi``)."""
    parsed = wire_quantity(value)
    if parsed is None:
        raise InventoryError(f"quantities must match the regular expression: {value!r} does not")
    return str(parsed)


def _attribute(name: str, value: Any, where: str) -> dict[str, Any]:
    # bool first: in Python a bool is also an int.
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, str):
        return {"string": value}
    if isinstance(value, Mapping):
        typed = {k: v for k, v in value.items() if k in ATTRIBUTE_TYPES}
        unknown = sorted(set(value) - set(ATTRIBUTE_TYPES))
        if unknown:
            raise InventoryError(f"{where}.attributes[{name}]: unknown attribute type(s) {', '.join(unknown)}")
        if len(typed) != 1:
            raise InventoryError(f"{where}.attributes[{name}]: exactly one of int, bool, string or version is required")
        kind, raw = next(iter(typed.items()))
        if kind == "version" and not isinstance(raw, str):
            raw = str(raw)
        return {kind: raw}
    raise InventoryError(f"{where}.attributes[{name}]: unsupported value {value!r}")


def _device(raw: Any, where: str) -> Device:
    if not isinstance(raw, Mapping):
        raise InventoryError(f"{where}: a device must be a mapping")
    unknown = sorted(set(raw) - {"name", "attributes", "capacity", "basic"})
    if unknown:
        raise InventoryError(f"{where}: unknown field(s) {', '.join(unknown)}")
    body: Mapping[str, Any] = raw.get("basic") or raw
    attributes = body.get("attributes") or {}
    capacity = body.get("capacity") or {}
    if not isinstance(attributes, Mapping) or not isinstance(capacity, Mapping):
        raise InventoryError(f"{where}: attributes and capacity must be mappings")
    device: Device = {
        "name": str(raw.get("name") or ""),
        "basic": {
            "attributes": {str(k): _attribute(str(k), v, where) for k, v in attributes.items()},
            "capacity": {str(k): {"value": _capacity(str(k), v, where)} for k, v in capacity.items()},
        },
    }
    errors = validate_device(device, where, limits=LIMITS_1_37)
    if errors:
        raise InventoryError("; ".join(str(e) for e in errors))
    return device


def _capacity(name: str, value: Any, where: str) -> str:
    if isinstance(value, Mapping) and set(value) == {"value"}:
        value = value["value"]
    try:
        return canonical_quantity(value)
    except InventoryError as err:
        raise InventoryError(f"{where}.capacity[{name}]: {err}") from None


def devices_from_document(document: Any) -> list[Device]:
    """Devices of a parsed inventory document (see the module docstring for the format)."""
    if not isinstance(document, Mapping) or not isinstance(document.get("devices"), Sequence):
        raise InventoryError("an inventory is a mapping with a `devices` list")
    devices = [_device(raw, f"devices[{i}]") for i, raw in enumerate(document["devices"])]
    seen: set[str] = set()
    for i, device in enumerate(devices):
        if device["name"] in seen:
            raise InventoryError(f"devices[{i}].name: Duplicate value: {device['name']!r}")
        seen.add(device["name"])
    return devices


def parse_inventory(text: str) -> list[Device]:
    """Devices of an inventory file's text."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise InventoryError(f"the inventory is not valid YAML: {err}") from None
    return devices_from_document(document)
