"""Device discovery: real NVIDIA GPUs through ``nvidia-smi`` when it exists, the inventory otherwise.

Why this module exists: on a machine with GPUs the driver should publish what
is there, the way NVIDIA's DRA driver does, without linking NVML. The parser
(`parse_query_output`) is pure and turns ``nvidia-smi --query-gpu=... --format=csv``
output into wire-form devices named ``gpu-<index>`` with the attributes the
default inventory has (index, uuid, model, driverVersion) and the GPU's
memory as capacity. NVIDIA driver versions such as ``535.104.05`` are not
semantic versions, so they are normalized (``535.104.5``) before they become a
``version`` attribute. `discover_devices` runs the binary (the only I/O here).
"""

from __future__ import annotations

import asyncio
import csv
import io
import logging
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from services.driver.inventory import Device, InventoryError, canonical_quantity, default_inventory, parse_inventory

log = logging.getLogger(__name__)

QUERY_FIELDS = ("index", "uuid", "name", "memory.total", "driver_version")
MAX_STRING_ATTRIBUTE_BYTES = 64  # resourceapi.DeviceAttributeMaxValueLength
_NOT_AVAILABLE = {"", "[N/A]", "N/A", "[Not Supported]"}
_UNIT = re.compile(r"^\s*([0-9]+)\s*(MiB|GiB)?\s*$")


class NvidiaSmiError(ValueError):
    """``nvidia-smi`` output that cannot be turned into devices."""


def query_command(binary: str = "nvidia-smi") -> list[str]:
    """The command line whose output `parse_query_output` reads."""
    return [binary, f"--query-gpu={','.join(QUERY_FIELDS)}", "--format=csv,noheader,nounits"]


def semver_of(driver_version: str) -> str:
    """An NVIDIA driver version as semver: ``535.104.05`` → ``535.104.5``, ``550.54`` → ``550.54.0``."""
    parts = driver_version.strip().split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise NvidiaSmiError(f"driver version {driver_version!r} is not numeric")
    numbers = [str(int(p)) for p in parts] + ["0"] * (3 - len(parts))
    return ".".join(numbers)


def _memory(value: str) -> str | None:
    if value.strip() in _NOT_AVAILABLE:
        return None
    m = _UNIT.match(value)
    if m is None:
        raise NvidiaSmiError(f"memory.total {value!r} is not a number of MiB")
    unit = "Gi" if m.group(2) == "GiB" else "Mi"
    return canonical_quantity(f"{m.group(1)}{unit}")


def _truncate(text: str) -> str:
    encoded = text.encode()[:MAX_STRING_ATTRIBUTE_BYTES]
    return encoded.decode(errors="ignore")


def parse_query_output(text: str) -> list[Device]:
    """Devices from ``nvidia-smi --query-gpu=index,uuid,name,memory.total,driver_version --format=csv``.

    Accepts the output with or without the header line and with or without
    units (``81920 MiB``), as ``--format=csv`` variants print it.
    """
    rows = [row for row in csv.reader(io.StringIO(text), skipinitialspace=True) if any(c.strip() for c in row)]
    if rows and rows[0] and rows[0][0].strip().lower() == "index":
        rows = rows[1:]
    devices: list[Device] = []
    for line, row in enumerate(rows, start=1):
        if len(row) != len(QUERY_FIELDS):
            raise NvidiaSmiError(f"line {line}: expected {len(QUERY_FIELDS)} fields, got {len(row)}")
        index_text, gpu_uuid, model, memory, driver_version = (c.strip() for c in row)
        if not index_text.isdigit():
            raise NvidiaSmiError(f"line {line}: index {index_text!r} is not a number")
        index = int(index_text)
        attributes: dict[str, dict[str, object]] = {
            "index": {"int": index},
            "uuid": {"string": _truncate(gpu_uuid)},
            "model": {"string": _truncate(model)},
        }
        if driver_version not in _NOT_AVAILABLE:
            attributes["driverVersion"] = {"version": semver_of(driver_version)}
        capacity: dict[str, dict[str, str]] = {}
        mem = _memory(memory)
        if mem is not None:
            capacity["memory"] = {"value": mem}
        devices.append({"name": f"gpu-{index}", "basic": {"attributes": attributes, "capacity": capacity}})
    return devices


@dataclass(frozen=True)
class Discovery:
    """The devices a driver found, and where they came from (``nvidia-smi``, a file, or the default)."""

    source: str
    devices: list[Device]


async def discover_devices(
    *,
    node: str,
    inventory: Path | None = None,
    num_devices: int = 8,
    nvidia_smi: str | None = "nvidia-smi",
) -> Discovery:
    """Real GPUs when ``nvidia_smi`` is found on PATH (or is a path), else the inventory file or the default.

    Pass ``nvidia_smi=None`` to skip hardware discovery. A failing
    ``nvidia-smi`` (no driver loaded, no GPU) falls back to the inventory.
    """
    binary = shutil.which(nvidia_smi) if nvidia_smi else None
    if binary is not None:
        try:
            proc = await asyncio.create_subprocess_exec(
                *query_command(binary), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
            async with asyncio.timeout(30):
                out, err = await proc.communicate()
            if proc.returncode == 0:
                return Discovery("nvidia-smi", parse_query_output(out.decode()))
            log.warning("nvidia-smi failed; using the inventory", extra={"stderr": err.decode()[:500]})
        except (OSError, TimeoutError, NvidiaSmiError, InventoryError) as exc:
            log.warning("nvidia-smi discovery failed; using the inventory", extra={"error": str(exc)})
    if inventory is not None:
        text = await asyncio.to_thread(inventory.read_text)
        return Discovery(str(inventory), parse_inventory(text))
    return Discovery("default", default_inventory(node, count=num_devices))
