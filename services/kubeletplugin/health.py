"""Device health, driver → node agent: kubelet's DRA health service (``dra-health/v1alpha1``) as a file.

Why this module exists: a 1.37 DRA driver streams per-device health to
kubelet (``NodeWatchResources``: pool, device, HEALTHY/UNHEALTHY/UNKNOWN,
an optional message); kubelet keeps the last report per (driver, pool,
device) and shows it in ``containerStatuses[].allocatedResourcesStatus``.
draplane's driver writes its last report as one JSON document,
``<state>/plugins/<driver>.health.json`` (replaced atomically), and the node
agent reads it whenever it writes a pod's status; a device without a report
is ``Unknown``, as in kubelet. Everything here is pure but the path helper.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from services.kubeletplugin.api import plugins_dir

HEALTHY = "Healthy"
UNHEALTHY = "Unhealthy"
UNKNOWN = "Unknown"
HEALTH_SUFFIX = ".health.json"

DeviceKey = tuple[str, str]  # pool, device


def health_path(state_dir: Path, driver: str) -> Path:
    return plugins_dir(state_dir) / f"{driver}{HEALTH_SUFFIX}"


def encode_health(report: Mapping[DeviceKey, str]) -> bytes:
    devices = [{"poolName": pool, "deviceName": device, "health": health} for (pool, device), health in report.items()]
    return orjson.dumps({"devices": devices})


def decode_health(raw: bytes) -> dict[DeviceKey, str]:
    """The report in a health file; a malformed file is an empty report (every device Unknown)."""
    try:
        doc: Any = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    out: dict[DeviceKey, str] = {}
    for entry in (doc.get("devices") if isinstance(doc, dict) else None) or ():
        if not isinstance(entry, dict):
            continue
        health = entry.get("health")
        out[(str(entry.get("poolName") or ""), str(entry.get("deviceName") or ""))] = (
            health if health in (HEALTHY, UNHEALTHY) else UNKNOWN
        )
    return out
