"""The driver's record of prepared claims, in SQLite, so a restart neither prepares twice nor leaks.

Why this module exists: dra-example-driver checkpoints its prepared claims
(``checkpoint.json`` under the plugin directory) and records a claim as
``PrepareStarted`` before it touches anything and ``PrepareCompleted`` once
the CDI spec is written. A driver killed in between finds the started entry
on restart and finishes or undoes it; a completed entry answers a repeated
prepare without doing the work again. Here the checkpoint is an aiosqlite
database (one row per claim UID, each change one statement committed with a
full fsync) so each state change is atomic and durable. Only the driver
process that owns the file writes it, so the entries are read once when it
opens and kept in memory beside it: a prepare reads its entry and counts the
prepared claims without a trip to the database's thread.
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
        self._file = SqliteFile(path, schema=_SCHEMA, synchronous="FULL", what="the checkpoint", autocommit=True)
        self._entries: dict[str, Entry] = {}

    async def open(self) -> None:
        await self._file.open()
        async with self.db.execute("SELECT uid, namespace, name, state, devices FROM prepared_claims") as cursor:
            rows = await cursor.fetchall()
        self._entries = {entry.claim.uid: entry for entry in (_entry(tuple(row)) for row in rows)}

    async def close(self) -> None:
        await self._file.close()

    @property
    def db(self) -> aiosqlite.Connection:
        return self._file.db

    async def get(self, uid: str) -> Entry | None:
        self._check_open()
        return self._entries.get(uid)

    async def entries(self) -> list[Entry]:
        self._check_open()
        return [self._entries[uid] for uid in sorted(self._entries)]

    async def put(self, state: str, claim: PreparedClaim) -> None:
        """Record the claim in ``state``; the entry is on disk when this returns."""
        devices = orjson.dumps([d.to_wire() for d in claim.devices])
        await self.db.execute(
            "INSERT INTO prepared_claims (uid, namespace, name, state, devices) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(uid) DO UPDATE SET namespace = excluded.namespace, name = excluded.name, "
            "state = excluded.state, devices = excluded.devices",
            (claim.uid, claim.namespace, claim.name, state, devices),
        )
        self._entries[claim.uid] = Entry(state, claim)

    async def delete(self, uid: str) -> None:
        await self.db.execute("DELETE FROM prepared_claims WHERE uid = ?", (uid,))
        self._entries.pop(uid, None)

    def _check_open(self) -> None:
        self.db  # noqa: B018 - raises when the checkpoint is not open


def _entry(row: tuple[object, ...]) -> Entry:
    uid, namespace, name, state, devices = row
    raw = orjson.loads(devices if isinstance(devices, bytes | str) else b"[]")
    claim = PreparedClaim(str(uid), str(namespace), str(name), tuple(PreparedDevice.from_wire(d) for d in raw))
    return Entry(str(state), claim)
