"""The inventory format and dra-example-driver's default GPUs."""

from __future__ import annotations

import pytest

from services.api.admission.validation.resource_slice import validate_resource_slice
from services.driver.inventory import (
    InventoryError,
    default_inventory,
    gpu_uuid,
    parse_inventory,
)
from services.driver.slices import desired_slices
from services.kube.resource_limits import LIMITS_1_37


def test_default_inventory_is_dra_example_drivers_eight_gpus() -> None:
    devices = default_inventory("node-a")
    assert [d["name"] for d in devices] == [f"gpu-{i}" for i in range(8)]
    first = devices[0]["basic"]
    assert first["attributes"] == {
        "index": {"int": 0},
        "uuid": {"string": gpu_uuid("node-a", 0)},
        "model": {"string": "LATEST-GPU-MODEL"},
        "driverVersion": {"version": "1.0.0"},
    }
    assert first["capacity"] == {"memory": {"value": "80Gi"}}  # the storage form
    assert devices[5]["basic"]["attributes"]["index"] == {"int": 5}


def test_uuids_are_stable_per_node_and_distinct_across_nodes_and_gpus() -> None:
    assert gpu_uuid("node-a", 0) == gpu_uuid("node-a", 0)
    uuids = {gpu_uuid(node, i) for node in ("node-a", "node-b") for i in range(8)}
    assert len(uuids) == 16
    assert all(u.startswith("gpu-") for u in uuids)


def test_default_inventory_size_is_configurable() -> None:
    assert len(default_inventory("n", count=3)) == 3
    assert default_inventory("n", count=0) == []
    with pytest.raises(InventoryError):
        default_inventory("n", count=-1)


def test_default_inventory_publishes_as_a_valid_slice() -> None:
    (published,) = desired_slices(
        node="node-a", driver="gpu.example.com", devices=default_inventory("node-a"), generation=1
    )
    assert validate_resource_slice(published, limits=LIMITS_1_37) == []


def test_inventory_shorthand_and_typed_attributes() -> None:
    devices = parse_inventory(
        """
devices:
- name: gpu-0
  attributes:
    index: 0
    model: A100
    ecc: true
    driverVersion: {version: 1.2.3}
    example.com/family: {string: ampere}
  capacity:
    memory: 81920Mi
    cores: 108
"""
    )
    assert devices == [
        {
            "name": "gpu-0",
            "basic": {
                "attributes": {
                    "index": {"int": 0},
                    "model": {"string": "A100"},
                    "ecc": {"bool": True},
                    "driverVersion": {"version": "1.2.3"},
                    "example.com/family": {"string": "ampere"},
                },
                # Kubernetes' canonical quantity form, so a published slice compares equal to the stored one.
                "capacity": {"memory": {"value": "80Gi"}, "cores": {"value": "108"}},
            },
        }
    ]


def test_the_wire_form_with_basic_is_accepted_too() -> None:
    devices = parse_inventory(
        "devices: [{name: nic-0, basic: {attributes: {speed: {int: 100}}, capacity: {bandwidth: 100G}}}]"
    )
    assert devices[0]["basic"] == {"attributes": {"speed": {"int": 100}}, "capacity": {"bandwidth": {"value": "100G"}}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("devices: [{name: gpu-0}, {name: gpu-0}]", "Duplicate value"),
        ("devices: [{name: GPU_0}]", "devices[0].name"),
        ("devices: [{name: gpu-0, attributes: {a: {int: 1, bool: true}}}]", "exactly one of"),
        ("devices: [{name: gpu-0, attributes: {a: {float: 1.5}}}]", "unknown attribute type"),
        ("devices: [{name: gpu-0, attributes: {a: [1]}}]", "unsupported value"),
        (
            "devices: [{name: gpu-0, attributes: {v: {version: 1.0}}}]",
            "devices[0].attributes[v].version",
        ),  # 1.37's path
        ("devices: [{name: gpu-0, capacity: {memory: lots}}]", "devices[0].capacity[memory]"),
        ("devices: [{name: gpu-0, color: red}]", "unknown field(s) color"),
        ("gpus: 8", "a mapping with a `devices` list"),
        ("devices: [oops", "not valid YAML"),
    ],
)
def test_invalid_inventories_say_where_and_why(text: str, message: str) -> None:
    with pytest.raises(InventoryError) as err:
        parse_inventory(text)
    assert message in str(err.value)


def test_the_example_inventory_parses() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[3] / "examples" / "inventory.yaml").read_text()
    devices = parse_inventory(text)
    assert [d["name"] for d in devices] == ["gpu-0", "gpu-1"]
    assert devices[1]["basic"]["attributes"]["driverVersion"] == {"version": "1.0.0"}
