"""Cross-process wake-ups for the embedded log: a datagram to every other process on the file.

Polling ``PRAGMA data_version`` (`services.bus.embedded.notify`) makes every
commit wait up to ``poll_interval_ms`` before a consumer in another process
reads it, and a pod's cycle crosses processes several times. So each bus that
opens the file also binds a Unix datagram socket in a directory beside it
(``<file>.wake/``); after a commit it sends the ids of the partitions it
touched to every other socket there, and the receiving bus wakes the waiters
of those partitions at once.

The poll stays as the fallback: a datagram that is lost (a peer's full socket
buffer, a peer that bound after the directory was listed, a directory that
cannot be written, a path too long for a socket) delays a consumer by at most
``poll_interval_ms``, as before; it never loses a record, because waking only
makes a consumer re-read the file. A socket left by a process that died is
removed by the first sender that finds nobody listening on it.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

log = logging.getLogger(__name__)

MAX_SOCKET_PATH = 100  # sockaddr_un holds 108 bytes on Linux, 104 on macOS; keep clear of both
RELIST_AFTER_S = 1.0  # a directory's mtime may not move for two changes in one clock tick
MAX_DATAGRAM = 64 * 1024


def wake_dir(db_path: Path) -> Path:
    """The directory of the wake-up sockets of the log at ``db_path``."""
    return db_path.with_name(db_path.name + ".wake")


def encode_pids(pids: Iterable[int]) -> bytes:
    return array.array("I", sorted(set(pids))).tobytes()


def decode_pids(data: bytes) -> list[int]:
    """The partition ids of a datagram; a malformed one (not whole ids) wakes nothing."""
    if len(data) % 4:
        return []
    ids = array.array("I")
    ids.frombytes(data)
    return list(ids)


class Peers:
    """This bus's socket in the wake directory, and the other buses' sockets to announce commits to."""

    def __init__(self, db_path: Path, on_wake: Callable[[list[int]], None]) -> None:
        self._dir = wake_dir(db_path)
        self._on_wake = on_wake
        self._sock: socket.socket | None = None
        self._path = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._peers: list[str] = []
        self._listed_mtime = -1
        self._listed_at = float("-inf")
        self.sent = 0
        self.received = 0
        # announce runs on the event loop's thread and on the writer's (a transaction's commit).
        self._sending = threading.Lock()

    @property
    def active(self) -> bool:
        return self._sock is not None

    def open(self) -> None:
        """Bind this bus's socket; on any failure the bus polls only (logged once, at INFO)."""
        path = str(self._dir / f"{os.getpid()}-{secrets.token_hex(4)}")
        if len(os.fsencode(path)) > MAX_SOCKET_PATH:
            log.info("embedded log: the path %s is too long for a socket; other processes' commits are polled", path)
            return
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            self._dir.mkdir(exist_ok=True)
            sock.setblocking(False)
            sock.bind(path)
        except OSError as exc:
            sock.close()
            log.info("embedded log: no cross-process wake-ups (%s); other processes' commits are polled", exc)
            return
        self._sock, self._path = sock, path
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(sock.fileno(), self._readable)

    def close(self) -> None:
        with self._sending:  # not while the writer's thread sends on it
            sock, self._sock = self._sock, None
        if sock is None:
            return
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(sock.fileno())
        sock.close()
        with contextlib.suppress(OSError):
            os.unlink(self._path)

    def announce(self, pids: Iterable[int]) -> None:
        """Tell every other bus on the file that ``pids`` have new committed records (from any thread)."""
        payload = encode_pids(pids)
        if not payload:
            return
        with self._sending:
            sock = self._sock
            if sock is None:
                return
            for peer in self._current_peers():
                try:
                    sock.sendto(payload, peer)
                    self.sent += 1
                except (ConnectionRefusedError, FileNotFoundError):  # its process is gone
                    self._forget(peer)
                except OSError:  # a full buffer (it has wake-ups pending) or a transient error: the poll covers it
                    pass

    def _readable(self) -> None:
        sock = self._sock
        if sock is None:
            return
        woken: set[int] = set()
        while True:
            try:
                data = sock.recv(MAX_DATAGRAM)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:
                log.debug("embedded log: wake-up socket read failed: %s", exc)
                break
            self.received += 1
            woken.update(decode_pids(data))
        if woken:
            self._on_wake(sorted(woken))

    def _current_peers(self) -> list[str]:
        now = time.monotonic()
        try:
            mtime = os.stat(self._dir).st_mtime_ns
        except OSError:
            return []
        if mtime != self._listed_mtime or now - self._listed_at > RELIST_AFTER_S:
            self._listed_mtime, self._listed_at = mtime, now
            try:
                with os.scandir(self._dir) as entries:
                    self._peers = [e.path for e in entries if e.path != self._path]
            except OSError:
                self._peers = []
        return self._peers

    def _forget(self, peer: str) -> None:
        with contextlib.suppress(ValueError):
            self._peers.remove(peer)
        with contextlib.suppress(OSError):
            os.unlink(peer)
