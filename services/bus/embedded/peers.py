"""Cross-process wake-ups for the embedded log: a datagram to every other process on the file.

Polling ``PRAGMA data_version`` (`services.bus.embedded.notify`) makes every
commit wait up to ``poll_interval_ms`` before a consumer in another process
reads it, and a pod's cycle crosses processes several times. So each bus that
opens the file also binds a Unix datagram socket in a directory beside it
(``<file>.wake/``); after a commit it sends the ids of the partitions it
touched to every other socket there, and the receiving bus wakes the waiters
of those partitions at once.

A commit is announced only to the buses that read one of the partitions it
touched. Each bus writes the ids of the partitions it has consumers of to a
file named as its socket in ``<file>.wants/`` (replaced whole, by rename, when
a new one is added, telling the other buses to list them again), and a
sender skips a peer whose file names none of them; a peer without a readable
file gets every datagram. Without it a request
appended by a component woke every process on the file, though only the
committer reads requests (docs/decisions/latency.md, "Eleventh pass").

The poll stays as the fallback: a datagram that is lost (a peer's full socket
buffer, a peer that bound or began reading a partition after the directories
were listed, a directory that cannot be written, a path too long for a
socket) delays a consumer by at most ``poll_interval_ms``, as before; it never
loses a record, because waking only makes a consumer re-read the file. A
socket left by a process that died is removed, with its file of partitions,
by the first sender that finds nobody listening on it.
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
RELIST = b"?"  # "list the directories again": not whole partition ids, so older buses ignore it


def wake_dir(db_path: Path) -> Path:
    """The directory of the wake-up sockets of the log at ``db_path``."""
    return db_path.with_name(db_path.name + ".wake")


def wants_dir(db_path: Path) -> Path:
    """The directory of the files naming the partitions each bus on the log at ``db_path`` reads."""
    return db_path.with_name(db_path.name + ".wants")


def encode_pids(pids: Iterable[int]) -> bytes:
    return array.array("I", sorted(set(pids))).tobytes()


def parse_pids(data: bytes) -> list[int] | None:
    """The partition ids ``data`` holds (`encode_pids`); None when it is not whole ids."""
    if len(data) % 4:
        return None
    ids = array.array("I")
    ids.frombytes(data)
    return list(ids)


def decode_pids(data: bytes) -> list[int]:
    """The partition ids of a datagram; a malformed one (not whole ids) wakes nothing."""
    return parse_pids(data) or []


def read_wants(path: Path) -> frozenset[int] | None:
    """The partitions a peer reads, from its file; None (send it everything) when missing or malformed."""
    try:
        ids = parse_pids(path.read_bytes())
    except OSError:
        return None
    return None if ids is None else frozenset(ids)


class Peers:
    """This bus's socket in the wake directory, and the other buses' sockets to announce commits to."""

    def __init__(self, db_path: Path, on_wake: Callable[[list[int]], None]) -> None:
        self._dir = wake_dir(db_path)
        self._wants_dir = wants_dir(db_path)
        self._on_wake = on_wake
        self._sock: socket.socket | None = None
        self._path = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wants: set[int] = set()  # the partitions this bus has consumers of
        self._peers: list[tuple[str, frozenset[int] | None]] = []  # socket, the partitions it reads (None: all)
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
        with contextlib.suppress(OSError):
            os.unlink(self._wants_path(self._path))

    def want(self, pid: int) -> None:
        """This bus reads partition ``pid`` from now on: commits to it are announced to it.

        Called before the consumer's first read. The other buses are told to
        list the directories again (a `RELIST` datagram: only a new socket
        moves the wake directory's mtime, which is what makes them list it);
        one that commits before it has, or loses that datagram, misses this
        bus until it lists them anyway (a second later at most): the poll
        covers that.
        """
        if pid in self._wants:
            return
        self._wants.add(pid)
        if self._sock is None:  # no socket: nobody sends to this bus anyway
            return
        mine = self._wants_path(self._path)
        staging = self._wants_dir / f".{mine.name}.new"
        try:
            self._wants_dir.mkdir(exist_ok=True)
            staging.write_bytes(encode_pids(self._wants))
            os.replace(staging, mine)
        except OSError as exc:
            log.info("embedded log: cannot publish the partitions read (%s); every commit is announced here", exc)
            with contextlib.suppress(OSError):
                os.unlink(mine)  # an older, smaller set would keep wake-ups from this bus
        with self._sending:
            for peer, _ in self._current_peers():
                self._send(RELIST, peer)

    def _wants_path(self, socket_path: str) -> Path:
        return self._wants_dir / os.path.basename(socket_path)

    def announce(self, pids: Iterable[int]) -> None:
        """Tell every other bus on the file that ``pids`` have new committed records (from any thread)."""
        touched = frozenset(pids)
        if not touched:
            return
        payload = encode_pids(touched)
        with self._sending:
            if self._sock is None:
                return
            for peer, wants in self._current_peers():
                if (wants is None or not wants.isdisjoint(touched)) and self._send(payload, peer):
                    self.sent += 1

    def _send(self, payload: bytes, peer: str) -> bool:
        """One datagram to ``peer`` (holding ``_sending``); False if it was not sent."""
        sock = self._sock
        if sock is None:
            return False
        try:
            sock.sendto(payload, peer)
            return True
        except (ConnectionRefusedError, FileNotFoundError):  # its process is gone
            self._forget(peer)
        except OSError:  # a full buffer (it has wake-ups pending) or a transient error: the poll covers it
            pass
        return False

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
            if data == RELIST:
                self._listed_at = float("-inf")  # the next announce lists the directories again
                continue
            self.received += 1
            woken.update(decode_pids(data))
        if woken:
            self._on_wake(sorted(woken))

    def _current_peers(self) -> list[tuple[str, frozenset[int] | None]]:
        now = time.monotonic()
        try:
            mtime = os.stat(self._dir).st_mtime_ns
        except OSError:
            return []
        if mtime != self._listed_mtime or now - self._listed_at > RELIST_AFTER_S:
            self._listed_mtime, self._listed_at = mtime, now
            try:
                with os.scandir(self._dir) as entries:
                    paths = [e.path for e in entries if e.path != self._path]
            except OSError:
                paths = []
            self._peers = [(p, read_wants(self._wants_path(p))) for p in paths]
        return self._peers

    def _forget(self, peer: str) -> None:
        self._peers = [entry for entry in self._peers if entry[0] != peer]
        with contextlib.suppress(OSError):
            os.unlink(peer)
        with contextlib.suppress(OSError):
            os.unlink(self._wants_path(peer))
