"""A local aiosqlite snapshot of materialized state: key → (offset, object), plus the offset.

The committer and informers rebuild their state from `objects`. With a
snapshot they start from the stored offset and read only the tail of the log.
Saves are incremental (only keys changed since the last save) and atomic: the
offset and the keys it covers are written in one SQLite transaction, so a
crash leaves either the old snapshot or the new one, never a mix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite
import orjson

from services.api.machinery.conversion import upgrade_stored
from services.runtime.sqlite_file import SqliteFile

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS objects (key TEXT PRIMARY KEY, offset INTEGER NOT NULL, value BLOB NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class Snapshot:
    offset: int  # the next offset to read from the log
    objects: dict[str, tuple[int, dict[str, Any]]]
    extra: dict[str, Any]


class SnapshotStore:
    """One snapshot file, owned by one process at a time."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file = SqliteFile(path, schema=_SCHEMA, synchronous="NORMAL", what="snapshot store")

    async def open(self) -> None:
        await self._file.open()

    async def close(self) -> None:
        await self._file.close()

    @property
    def db(self) -> aiosqlite.Connection:
        return self._file.db

    async def load(self) -> Snapshot | None:
        """The stored snapshot, or None when there is none (or it is unreadable)."""
        async with self.db.execute("SELECT name, value FROM meta") as cur:
            meta = {name: value async for name, value in cur}
        if "offset" not in meta:
            return None
        objects: dict[str, tuple[int, dict[str, Any]]] = {}
        async with self.db.execute("SELECT key, offset, value FROM objects") as cur:
            async for key, offset, value in cur:
                # A snapshot taken before the hub form holds 1.31 resource.k8s.io objects.
                objects[key] = (offset, upgrade_stored(orjson.loads(value)))
        extra = orjson.loads(meta["extra"]) if "extra" in meta else {}
        return Snapshot(int(meta["offset"]), objects, extra)

    async def save(
        self,
        *,
        offset: int,
        upserts: Mapping[str, tuple[int, dict[str, Any]]],
        deletes: Iterable[str],
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        """Record changed keys and the new offset atomically."""
        db = self.db
        await db.execute("BEGIN")
        try:
            await db.executemany(
                "INSERT INTO objects(key, offset, value) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET offset=excluded.offset, value=excluded.value",
                [(k, off, orjson.dumps(obj)) for k, (off, obj) in upserts.items()],
            )
            await db.executemany("DELETE FROM objects WHERE key = ?", [(k,) for k in deletes])
            await db.execute(
                "INSERT INTO meta(name, value) VALUES ('offset', ?) "
                "ON CONFLICT(name) DO UPDATE SET value=excluded.value",
                (str(offset),),
            )
            if extra is not None:
                await db.execute(
                    "INSERT INTO meta(name, value) VALUES ('extra', ?) "
                    "ON CONFLICT(name) DO UPDATE SET value=excluded.value",
                    (orjson.dumps(dict(extra)).decode(),),
                )
            await db.commit()
        except BaseException:
            await db.rollback()
            raise
