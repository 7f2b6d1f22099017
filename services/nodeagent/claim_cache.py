"""The node agent's record of claims on this node: which pods use them and what the drivers prepared.

Why this module exists: kubelet's DRA manager keeps a checkpointed
"claim info" cache (``dra_manager_state``): a claim is recorded with the
pod that needs it *before* the driver is asked to prepare it, marked prepared
afterwards with its CDI devices, and unprepared only when the last pod on the
node that uses it is gone. After a restart, the node agent still knows which
claims to unprepare for pods deleted while it was down. The cache is a JSON
file written atomically (temporary file, fsync, rename, fsync of the directory)
after each change. `ClaimCache.checkpoint` encodes the cache when it is called
and writes it on the cache's own thread, so checkpoints land in the order they
were taken even when the caller does not wait for one before changing the
cache again (the node agent does not wait for the one after a prepare before
it reports the pod Running: see `services.nodeagent.agent`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from services.runtime.atomic_files import FileThread, write_atomically


@dataclass
class ClaimInfo:
    """One claim on this node (``ClaimInfo``)."""

    uid: str
    namespace: str
    name: str
    drivers: list[str]
    pod_uids: set[str] = field(default_factory=set)
    prepared: bool = False
    devices: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # driver -> plugin API devices

    def all_devices(self) -> list[dict[str, Any]]:
        return [d for driver in self.drivers for d in self.devices.get(driver, ())]

    def to_wire(self) -> dict[str, Any]:
        return {
            "uid": self.uid,
            "namespace": self.namespace,
            "name": self.name,
            "drivers": self.drivers,
            "podUIDs": sorted(self.pod_uids),
            "prepared": self.prepared,
            "devices": self.devices,
        }

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any]) -> ClaimInfo:
        return cls(
            uid=str(raw["uid"]),
            namespace=str(raw.get("namespace", "")),
            name=str(raw.get("name", "")),
            drivers=[str(d) for d in raw.get("drivers") or ()],
            pod_uids={str(u) for u in raw.get("podUIDs") or ()},
            prepared=bool(raw.get("prepared")),
            devices={str(k): list(v) for k, v in (raw.get("devices") or {}).items()},
        )


class ClaimCache:
    """Claim infos by (namespace, name), persisted to ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._infos: dict[tuple[str, str], ClaimInfo] = {}
        self._files = FileThread(name="claim-cache")

    def __iter__(self) -> Iterator[ClaimInfo]:
        return iter(list(self._infos.values()))

    def __len__(self) -> int:
        return len(self._infos)

    def get(self, namespace: str, name: str) -> ClaimInfo | None:
        return self._infos.get((namespace, name))

    def put(self, info: ClaimInfo) -> None:
        self._infos[(info.namespace, info.name)] = info

    def remove(self, namespace: str, name: str) -> None:
        self._infos.pop((namespace, name), None)

    def load(self) -> None:
        """Read the file (a missing or unreadable file is an empty cache)."""
        try:
            raw = orjson.loads(self.path.read_bytes())
        except (FileNotFoundError, orjson.JSONDecodeError):
            raw = {}
        self._infos = {}
        for entry in raw.get("claims") or ():
            with contextlib.suppress(KeyError, TypeError, ValueError):
                self.put(ClaimInfo.from_wire(entry))

    def encode(self) -> bytes:
        return orjson.dumps({"version": 1, "claims": [i.to_wire() for i in self._infos.values()]})

    def save(self) -> None:
        """Write the file atomically (blocking)."""
        write_atomically(self.path, self.encode(), mode=0o600)

    def checkpoint(self) -> asyncio.Future[None]:
        """Encode the cache now and write it atomically on the cache's thread (in a running loop).

        Awaiting the result waits until the file is on disk; checkpoints land in
        the order of the calls, so a later one is never overwritten by an earlier one.
        """
        return self._files.submit(write_atomically, self.path, self.encode(), mode=0o600)

    def close(self) -> None:
        """End the cache's thread once the checkpoints already taken are written."""
        self._files.close()
