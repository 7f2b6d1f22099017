"""Files that appear whole or not at all, written off the event loop.

Why this module exists: the driver's CDI spec files and the node agent's claim
cache are read by others (a container runtime, the next run of the agent) at
any moment and must survive a crash, so each is written to a temporary file
in the same directory, fsynced, renamed over the old one, and the directory
fsynced so the rename itself is durable. An fsync can take tens of
milliseconds on a busy disk; on the event loop it would stall every other
task of the process (heartbeats, informers, other prepares), so the writes
run on a thread. `FileThread` runs them one at a time in the order they were
asked for, so an earlier write of a file never lands after a later one — not
even when the coroutine that asked for the earlier one was cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

Fsync = Callable[[int], None]
"""``os.fsync``, or a stand-in a test injects to hold a write in the middle."""


def write_atomically(path: Path, data: bytes, *, mode: int = 0o644, fsync: Fsync = os.fsync) -> None:
    """Replace ``path`` with ``data``: temporary file, fsync, rename, fsync of the directory (blocking).

    A reader sees the old content or the new, never a part. The temporary file
    is dot-prefixed and ends in ``.tmp`` (so directory scanners that look for
    ``.json``/``.yaml`` skip it), unique per write, and removed when the write fails.
    """
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    sync_directory(directory, fsync=fsync)


def sync_directory(directory: Path, *, fsync: Fsync = os.fsync) -> None:
    """fsync ``directory`` so a rename or removal in it survives a crash (blocking)."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fsync(fd)
    finally:
        os.close(fd)


class FileThread:
    """One worker thread for blocking file operations, run in the order they were submitted.

    ``await files.run(fn, ...)`` returns ``fn``'s result; the loop runs other
    tasks meanwhile. Cancelling the awaiting coroutine drops ``fn`` if the
    thread has not picked it up yet; one that has started cannot be
    interrupted, and whatever is submitted next still runs after it.
    ``close`` lets the queued operations finish and ends the thread.
    """

    def __init__(self, *, name: str) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    async def run(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.submit(fn, *args, **kwargs)

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> asyncio.Future[T]:
        """Queue ``fn`` now (its place in the order is taken by this call) and return its future (in a loop)."""
        loop = asyncio.get_running_loop()
        return loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def close(self) -> None:
        self._executor.shutdown(wait=False)
