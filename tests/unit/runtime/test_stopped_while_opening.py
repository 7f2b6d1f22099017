"""A component stopped while its snapshot opens closes it: no thread is left to keep the process from exiting.

aiosqlite runs each connection on a thread that is not a daemon, so a
snapshot left open by a cancelled start keeps the interpreter waiting at exit
for ever. `draplane apiserver` stopped by Ctrl-C right after "ready" hung so
(tests/integration/stack: the lock file of a killed holder), when its
committer, slower than the view on a loaded machine, was still opening its
snapshot: ``Committer.run`` opened it outside the ``try`` that closes it.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import cast

import pytest

from services.bus.port import Bus
from services.runtime.committer import Committer
from services.runtime.committer_core import CommitterCore
from services.runtime.informer import Informer
from services.runtime.snapshot import SnapshotStore
from services.runtime.sqlite_file import SqliteFile


def left_running(since: set[threading.Thread]) -> list[threading.Thread]:
    """The threads started after ``since`` was taken that are still alive, each given 2 s to end."""
    started = set(threading.enumerate()) - since
    for thread in started:
        thread.join(2)
    return [t for t in started if t.is_alive()]


class OpensThenHangs(SnapshotStore):
    """A snapshot store whose open gets the file and then never ends (a caller slow to set it up)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.opened = asyncio.Event()
        self.closes = 0

    async def open(self) -> None:
        await super().open()
        self.opened.set()
        await asyncio.Event().wait()

    async def close(self) -> None:
        self.closes += 1
        await super().close()


async def test_an_open_cancelled_half_way_closes_the_file(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    file = SqliteFile(tmp_path / "f.db", schema="CREATE TABLE t (x)", synchronous="NORMAL", what="test file")
    opening = asyncio.create_task(file.open())
    for _ in range(5000):  # until connected: the cancellation then lands in the file's set-up (its PRAGMAs)
        if file._db is not None:
            break
        await asyncio.sleep(0.001)
    assert file._db is not None and not opening.done()
    opening.cancel()
    with pytest.raises(asyncio.CancelledError):
        await opening
    assert left_running(before) == []
    with pytest.raises(RuntimeError, match="not open"):
        _ = file.db


async def test_a_committer_stopped_while_its_snapshot_opens_closes_it(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    store = OpensThenHangs(tmp_path / "committer.db")
    committer = Committer(cast(Bus, None), CommitterCore(), snapshot=store)  # it never gets to the log
    running = asyncio.create_task(committer.run())
    await store.opened.wait()
    running.cancel()  # Supervised.stop(), on Ctrl-C
    with pytest.raises(asyncio.CancelledError):
        await running
    assert store.closes == 1
    assert left_running(before) == []


async def test_an_informer_stopped_after_a_start_cut_short_closes_its_snapshot_and_saves_nothing(
    tmp_path: Path,
) -> None:
    earlier = SnapshotStore(tmp_path / "view.db")
    await earlier.open()
    await earlier.save(offset=7, upserts={"core/pods/default/a": (6, {"metadata": {"name": "a"}})}, deletes=[])
    await earlier.close()
    store = OpensThenHangs(tmp_path / "view.db")
    informer = Informer(cast(Bus, None), snapshot=store)
    starting = asyncio.create_task(informer.start())
    await store.opened.wait()
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starting
    await informer.stop()
    assert store.closes == 1
    again = SnapshotStore(tmp_path / "view.db")
    await again.open()
    snap = await again.load()
    await again.close()
    assert snap is not None and snap.offset == 7  # not the 0 of an informer that never read
