"""write_atomically keeps the old file when a write fails; FileThread runs operations in the order asked for."""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from pathlib import Path

import pytest

from services.runtime.atomic_files import FileThread, write_atomically


def test_a_failed_fsync_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "claims.json"
    write_atomically(path, b"old", mode=0o600)

    def failing_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    with pytest.raises(OSError, match="Input/output error"):
        write_atomically(path, b"new", fsync=failing_fsync)
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["claims.json"]


def test_the_file_gets_the_mode_asked_for_and_its_directory_is_created(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "spec.yaml"
    write_atomically(path, b"x" * 300_000, mode=0o640)
    assert path.read_bytes() == b"x" * 300_000
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


async def test_operations_run_one_at_a_time_in_the_order_they_were_submitted() -> None:
    files = FileThread(name="test-files")
    gate = threading.Event()
    started = threading.Event()
    done: list[int] = []

    def step(i: int) -> int:
        if i == 0:
            started.set()
            gate.wait(timeout=30)  # the first holds the thread; the others queue behind it
        done.append(i)
        return i

    try:
        tasks = [asyncio.create_task(files.run(step, i)) for i in range(5)]
        assert await asyncio.to_thread(started.wait, 30)  # every task has submitted by now
        tasks[0].cancel()  # running: it cannot be stopped, and what follows still waits for it
        tasks[1].cancel()  # still queued: it is dropped
        await asyncio.wait(tasks[:2])  # both waiters gone (and the queued operation taken off the queue)
        gate.set()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert [type(r) for r in results[:2]] == [asyncio.CancelledError] * 2
        assert results[2:] == [2, 3, 4]
        assert done == [0, 2, 3, 4]
    finally:
        gate.set()
        files.close()
