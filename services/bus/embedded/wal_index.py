"""How many frames of a log's WAL wait to be copied into the file: read from its WAL-index header.

The WAL-index (the ``-shm`` file beside the log; https://www.sqlite.org/walformat.html)
starts with a header holding mxFrame, the WAL's last valid frame (byte 16), and
nBackfill, the frames a checkpoint has already copied (byte 96), in native byte
order. Reading 100 bytes of it costs a system call and takes no lock.

The file is opened once per process and closed only when no `Database` of the
process has the log open any more: closing *any* descriptor of a file drops
every POSIX lock the process holds on that file, SQLite's own locks on the
WAL-index among them. Opening and closing it for each read let another process
take this one's connections for gone and rebuild the index under them; pods
then stalled for good.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

MX_FRAME = slice(16, 20)
N_BACKFILL = slice(96, 100)
HEADER_BYTES = 100

_lock = threading.Lock()
_open: dict[str, tuple[int, int]] = {}  # WAL-index path -> (descriptor, users)


def _key(db_path: Path) -> str:
    return os.path.realpath(f"{db_path}-shm")


def acquire(db_path: Path) -> None:
    """A `Database` of this process has ``db_path`` open (its connections made the WAL-index)."""
    key = _key(db_path)
    with _lock:
        held = _open.get(key)
        if held is not None:
            _open[key] = (held[0], held[1] + 1)
            return
        try:
            fd = os.open(key, os.O_RDONLY)
        except OSError:
            fd = -1  # no WAL-index to read: frames_to_copy answers None
        _open[key] = (fd, 1)


def release(db_path: Path) -> None:
    """That `Database` closed its connections; the last one out closes the descriptor."""
    key = _key(db_path)
    with _lock:
        held = _open.get(key)
        if held is None:
            return
        fd, users = held
        if users > 1:
            _open[key] = (fd, users - 1)
            return
        del _open[key]
    if fd >= 0:
        os.close(fd)


def frames_to_copy(db_path: Path) -> int | None:
    """Frames of the WAL of ``db_path`` not yet copied into it; None when its WAL-index is not held open here."""
    with _lock:
        held = _open.get(_key(db_path))
    if held is None or held[0] < 0:
        return None
    try:
        header = os.pread(held[0], HEADER_BYTES, 0)
    except OSError:
        return None
    if len(header) < HEADER_BYTES:
        return None
    mx_frame = int.from_bytes(header[MX_FRAME], sys.byteorder)
    backfilled = int.from_bytes(header[N_BACKFILL], sys.byteorder)
    return max(0, mx_frame - backfilled)
