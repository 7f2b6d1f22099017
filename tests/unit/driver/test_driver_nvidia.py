"""Parsing nvidia-smi's CSV output, and discovery's fallback to the inventory."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from services.driver.nvidia import (
    NvidiaSmiError,
    discover_devices,
    parse_query_output,
    query_command,
    semver_of,
)

# nvidia-smi --query-gpu=index,uuid,name,memory.total,driver_version --format=csv,noheader,nounits
NOHEADER_NOUNITS = """\
0, GPU-5f2c9d1e-3a4b-11ee-be56-0242ac120002, NVIDIA A100-SXM4-80GB, 81920, 535.104.05
1, GPU-6a3d0e2f-3a4b-11ee-be56-0242ac120002, NVIDIA A100-SXM4-80GB, 81920, 535.104.05
"""

# nvidia-smi --query-gpu=... --format=csv
WITH_HEADER_AND_UNITS = """\
index, uuid, name, memory.total [MiB], driver_version
0, GPU-1b2c, Tesla T4, 15360 MiB, 550.54
"""


def test_query_command_asks_for_the_parsed_fields() -> None:
    assert query_command("/usr/bin/nvidia-smi") == [
        "/usr/bin/nvidia-smi",
        "--query-gpu=index,uuid,name,memory.total,driver_version",
        "--format=csv,noheader,nounits",
    ]


def test_parse_noheader_nounits() -> None:
    devices = parse_query_output(NOHEADER_NOUNITS)
    assert [d["name"] for d in devices] == ["gpu-0", "gpu-1"]
    assert devices[1]["basic"] == {
        "attributes": {
            "index": {"int": 1},
            "uuid": {"string": "GPU-6a3d0e2f-3a4b-11ee-be56-0242ac120002"},
            "model": {"string": "NVIDIA A100-SXM4-80GB"},
            "driverVersion": {"version": "535.104.5"},
        },
        "capacity": {"memory": {"value": "80Gi"}},
    }


def test_parse_with_header_and_units() -> None:
    (device,) = parse_query_output(WITH_HEADER_AND_UNITS)
    assert device["basic"]["capacity"] == {"memory": {"value": "15Gi"}}
    assert device["basic"]["attributes"]["driverVersion"] == {"version": "550.54.0"}


def test_not_available_values_are_left_out() -> None:
    (device,) = parse_query_output("3, GPU-x, Some GPU, [N/A], [N/A]\n")
    assert device["basic"]["capacity"] == {}
    assert "driverVersion" not in device["basic"]["attributes"]


def test_empty_output_is_no_devices() -> None:
    assert parse_query_output("\n") == []


@pytest.mark.parametrize(
    ("version", "semver"),
    [("535.104.05", "535.104.5"), ("550.54", "550.54.0"), ("470", "470.0.0"), ("1.02.003", "1.2.3")],
)
def test_driver_versions_become_semver(version: str, semver: str) -> None:
    assert semver_of(version) == semver


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0, GPU-x, T4, 15360\n", "expected 5 fields"),
        ("zero, GPU-x, T4, 15360, 550.54\n", "is not a number"),
        ("0, GPU-x, T4, many, 550.54\n", "memory.total"),
        ("0, GPU-x, T4, 15360, r550\n", "not numeric"),
    ],
)
def test_malformed_output_is_an_error(text: str, message: str) -> None:
    with pytest.raises(NvidiaSmiError) as err:
        parse_query_output(text)
    assert message in str(err.value)


async def test_discovery_uses_nvidia_smi_when_it_exists(tmp_path: Path) -> None:
    fake = tmp_path / "nvidia-smi"
    fake.write_text(f"#!/bin/sh\ncat <<'OUT'\n{NOHEADER_NOUNITS}OUT\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    found = await discover_devices(node="n", nvidia_smi=str(fake))
    assert found.source == "nvidia-smi"
    assert [d["name"] for d in found.devices] == ["gpu-0", "gpu-1"]


async def test_discovery_falls_back_when_nvidia_smi_fails(tmp_path: Path) -> None:
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("devices: [{name: gpu-0, attributes: {index: 0}}]\n")
    found = await discover_devices(node="n", inventory=inventory, nvidia_smi=str(fake))
    assert found.source == str(inventory)
    assert [d["name"] for d in found.devices] == ["gpu-0"]


async def test_discovery_without_nvidia_smi_or_inventory_is_the_default() -> None:
    found = await discover_devices(node="n", num_devices=2, nvidia_smi="/nonexistent/nvidia-smi")
    assert found.source == "default"
    assert [d["name"] for d in found.devices] == ["gpu-0", "gpu-1"]
