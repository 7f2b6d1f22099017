"""CDI spec files land whole (temp, fsync, rename, fsync of the directory), and the event loop runs on meanwhile.

The fsync is injected: it records what it was called on and, for the claim's
spec file, waits until the test lets it go. While it waits, another task must
get to run and the spec must not be visible yet; after it, the file is whole
and no temporary file is left.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from pathlib import Path

from services.driver import cdi
from services.driver.cdi_files import CdiDirectory

DRIVER = "gpu.example.com"
SPEC = cdi.common_spec(driver=DRIVER, node="node-1")


def names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


class HeldFsync:
    """An fsync that records each call and holds the first call on a regular file until released."""

    def __init__(self, *, final: Path) -> None:
        self.final = final
        self.calls: list[tuple[str, bool]] = []  # ("file" | "dir", whether the final path existed)
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, fd: int) -> None:
        kind = "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        self.calls.append((kind, self.final.exists()))
        if kind == "file" and not self.entered.is_set():
            self.entered.set()
            # Bounded only so that a write on the loop thread (the bug) fails the test instead of hanging it.
            self.release.wait(timeout=30)
        os.fsync(fd)


async def test_a_spec_write_leaves_the_loop_free_and_lands_whole_after_its_fsyncs(tmp_path: Path) -> None:
    final = tmp_path / cdi.claim_spec_file(DRIVER, "uid-1")
    fsync = HeldFsync(final=final)
    directory = CdiDirectory(tmp_path, driver=DRIVER, fsync=fsync)
    try:
        write = asyncio.create_task(directory.write_claim("uid-1", SPEC))
        assert await asyncio.to_thread(fsync.entered.wait, 30), "the write never reached its fsync"

        ran = asyncio.Event()
        asyncio.get_running_loop().call_soon(ran.set)
        await ran.wait()  # another callback ran while the write sits in its fsync
        assert not write.done()
        assert not final.exists(), "the spec is visible before its data was fsynced"

        fsync.release.set()
        assert await write == final
        assert final.read_text() == cdi.render(SPEC)
        assert fsync.calls == [("file", False), ("dir", True)], "file fsync before the rename, directory after"
        assert names(tmp_path) == [final.name], "no temporary file left"
        assert await directory.has_claim("uid-1")
        assert await directory.claim_uids() == ["uid-1"]
    finally:
        fsync.release.set()
        directory.close()


async def test_a_removal_asked_for_after_a_write_runs_after_it_even_when_the_writer_was_cancelled(
    tmp_path: Path,
) -> None:
    final = tmp_path / cdi.claim_spec_file(DRIVER, "uid-1")
    fsync = HeldFsync(final=final)
    directory = CdiDirectory(tmp_path, driver=DRIVER, fsync=fsync)
    try:
        write = asyncio.create_task(directory.write_claim("uid-1", SPEC))
        assert await asyncio.to_thread(fsync.entered.wait, 30)
        write.cancel()  # the thread goes on writing; the removal must not overtake it
        remove = asyncio.create_task(directory.remove_claim("uid-1"))
        fsync.release.set()
        await remove
        assert write.cancelled()
        assert not final.exists()
        assert names(tmp_path) == []
    finally:
        fsync.release.set()
        directory.close()


async def test_a_rewrite_replaces_the_whole_file_and_the_common_spec_is_not_a_claim(tmp_path: Path) -> None:
    directory = CdiDirectory(tmp_path, driver=DRIVER)
    try:
        big = {
            **SPEC,
            "devices": [{"name": f"gpu-{i}", "containerEdits": {"env": ["X=" + "y" * 100]}} for i in range(50)],
        }
        await directory.write_claim("uid-1", big)
        await directory.write_claim("uid-1", SPEC)
        await directory.write_common(SPEC)
        assert directory.path_for("uid-1").read_text() == cdi.render(SPEC)
        assert await directory.claim_uids() == ["uid-1"]
        await directory.remove_claim("uid-1")
        await directory.remove_claim("uid-1")  # already gone: nothing to do
        assert await directory.claim_uids() == []
        assert not await directory.has_claim("uid-1")
    finally:
        directory.close()
