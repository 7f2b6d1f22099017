"""The driver's record of prepared claims, in SQLite, so a restart neither prepares twice nor leaks.

Why this module exists: dra-example-driver checkpoints its prepared claims
(``checkpoint.json`` under the plugin directory) and records a claim as
``PrepareStarted`` before it touches anything and ``PrepareCompleted`` once
the CDI spec is written. A driver killed in between finds the started entry
on restart and finishes or undoes it; a completed entry answers a repeated
prepare without doing the work again. Here the checkpoint is an aiosqlite
database (one row per claim UID, committed on every change) so each state
change is atomic and durable.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import aiosqlite
import orjson

from services.driver.prepared import PreparedClaim, PreparedDevice
from services.runtime.sqlite_file import SqliteFile

PREPARE_STARTED = "PrepareStarted"
PREPARE_COMPLETED = "PrepareCompleted"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS prepared_claims (
    uid TEXT PRIMARY KEY,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    state TEXT NOT NULL,
    devices BLOB NOT NULL
)
"""


@dataclass(frozen=True, slots=True)
class Entry:
    """One checkpointed claim and how far its preparation got."""

    state: str
    claim: PreparedClaim

    @property
    def completed(self) -> bool:
        return self.state == PREPARE_COMPLETED


class Checkpoint:
    """Prepared claims by UID in a SQLite file (WAL, one transaction per change)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # FULL: a claim recorded as prepared must survive a power cut, not only a crash.
        self._file = SqliteFile(path, schema=_SCHEMA, synchronous="FULL", what="the checkpoint")

    async def open(self) -> None:
        await self._file.open()

    async def close(self) -> None:
        await self._file.close()

    @property
    def db(self) -> aiosqlite.Connection:
        return self._file.db

    async def get(self, uid: str) -> Entry | None:
        async with self.db.execute(
            "SELECT uid, namespace, name, state, devices FROM prepared_claims WHERE uid = ?", (uid,)
        ) as cursor:
            row = await cursor.fetchone()
        return _entry(tuple(row)) if row is not None else None

    async def entries(self) -> list[Entry]:
        async with self.db.execute(
            "SELECT uid, namespace, name, state, devices FROM prepared_claims ORDER BY uid"
        ) as cursor:
            rows = await cursor.fetchall()
        return [_entry(tuple(row)) for row in rows]

    async def put(self, state: str, claim: PreparedClaim) -> None:
        devices = orjson.dumps([d.to_wire() for d in claim.devices])
        await self.db.execute(
            "INSERT INTO prepared_claims (uid, namespace, name, state, devices) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(uid) DO UPDATE SET namespace = excluded.namespace, name = excluded.name, "
            "state = excluded.state, devices = excluded.devices",
            (claim.uid, claim.namespace, claim.name, state, devices),
        )
        await self.db.commit()

    async def delete(self, uid: str) -> None:
        await self.db.execute("DELETE FROM prepared_claims WHERE uid = ?", (uid,))
        await self.db.commit()


def _entry(row: tuple[object, ...]) -> Entry:
    uid, namespace, name, state, devices = row
    raw = orjson.loads(devices if isinstance(devices, bytes | str) else b"[]")
    claim = PreparedClaim(str(uid), str(namespace), str(name), tuple(PreparedDevice.from_wire(d) for d in raw))
    return Entry(str(state), claim)
