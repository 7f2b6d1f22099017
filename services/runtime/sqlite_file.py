"""A local SQLite file in WAL mode reached through aiosqlite: open, close and the open connection.

Why this module exists: the informer/committer snapshots (`snapshot.py`) and
the driver's checkpoint of prepared claims (`services.driver.checkpoint`) are
both one process's private SQLite file, opened the same way; only their
schema, how hard a commit must reach the disk and whether each statement
commits itself (``autocommit``: one trip to aiosqlite's thread per change
instead of two) differ.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import aiosqlite


class SqliteFile:
    """One SQLite file, created with ``schema`` on first open; ``db`` while it is open."""

    def __init__(
        self,
        path: str | Path,
        *,
        schema: str,
        synchronous: Literal["NORMAL", "FULL"],
        what: str,
        autocommit: bool = False,
    ) -> None:
        self.path = Path(path)
        self._schema = schema
        self._synchronous = synchronous
        self._what = what
        self._autocommit = autocommit  # each statement its own transaction: one trip to the connection's thread
        self._db: aiosqlite.Connection | None = None

    async def open(self) -> None:
        """Open (and create) the file; when this fails or is cancelled half-way, nothing stays open.

        aiosqlite runs each connection on a thread of its own that is not a
        daemon: a connection left open keeps the process from exiting.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._autocommit:
            self._db = await aiosqlite.connect(self.path, isolation_level=None)
        else:
            self._db = await aiosqlite.connect(self.path)
        try:
            await self._db.execute("PRAGMA journal_mode=WAL")
            await self._db.execute(f"PRAGMA synchronous={self._synchronous}")
            await self._db.executescript(self._schema)
            await self._db.commit()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            await db.close()  # its thread ends even when this is cancelled (aiosqlite queues the stop first)

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError(f"{self._what} is not open")
        return self._db
