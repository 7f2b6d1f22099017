"""One stack per data directory: an exclusive lock on ``<data>/draplane.lock``, naming its holder.

Two stacks on one ``--data`` would share one log, one set of snapshots and
one kubeconfig: the second rewrites the kubeconfig and kubectl against the
first breaks. So `draplane up` (and `draplane apiserver` on the embedded log
in its ``--data``) holds an ``flock`` on a file in the directory for as long
as it runs. The file holds the holder's PID and address, so a second one can
say who is there. The kernel drops the lock when the process ends, however
it ends: a file left by a dead process blocks nobody, and the next holder
overwrites it. The file itself is never removed (removing it would let a
third process lock a new file while a second still holds the old one).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from services.cmd.errors import CommandError

LOCK_FILE = "draplane.lock"


@dataclass(frozen=True, slots=True)
class Holder:
    """What the lock file says about the process holding it."""

    pid: int | None
    address: str

    @classmethod
    def parse(cls, text: str) -> Holder:
        lines = text.splitlines()
        pid = int(lines[0]) if lines and lines[0].strip().isdigit() else None
        return cls(pid=pid, address=lines[1].strip() if len(lines) > 1 else "")

    def render(self) -> str:
        return f"{self.pid if self.pid is not None else ''}\n{self.address}\n"


class DataDirInUse(CommandError):
    """Another live process holds the data directory."""

    def __init__(self, data: Path, holder: Holder) -> None:
        pid = str(holder.pid) if holder.pid is not None else "unknown"
        address = holder.address or "address not yet known"
        super().__init__(
            f"{data} is in use by another draplane (PID {pid}, {address}); stop it or choose another --data"
        )
        self.holder = holder


class DataDirLock:
    """The held lock: `update` the address once the server is bound, `release` on exit."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def update(self, address: str) -> None:
        """Record the address actually served (known only once the port is bound, e.g. for port 0)."""
        if self._fd is not None:
            _write(self._fd, Holder(pid=os.getpid(), address=address))

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)  # no stale PID for the next reader; the kernel would drop the lock anyway
        os.close(fd)  # closing the last descriptor releases the flock


def acquire(data: Path, *, address: str) -> DataDirLock:
    """Lock ``data`` (creating it) for this process; `DataDirInUse` naming the holder when another has it."""
    data.mkdir(parents=True, exist_ok=True)
    path = data / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = Holder.parse(os.pread(fd, 4096, 0).decode(errors="replace"))
        os.close(fd)
        raise DataDirInUse(data, holder) from None
    except BaseException:
        os.close(fd)
        raise
    _write(fd, Holder(pid=os.getpid(), address=address))
    return DataDirLock(path, fd)


@contextlib.contextmanager
def holding(data: Path, *, address: str) -> Iterator[DataDirLock]:
    """`acquire` for the duration of a ``with`` block.

    Meanwhile SIGTERM is Ctrl-C (``KeyboardInterrupt``) where no event loop
    takes it (`services.cmd.stopping`), so that the file is emptied however
    its holder is asked to stop (only SIGKILL leaves it behind).
    """
    with _sigterm_interrupts():
        lock = acquire(data, address=address)
        try:
            yield lock
        finally:
            lock.release()


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield  # signals are the main thread's; a handler in place stays
        return
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _write(fd: int, holder: Holder) -> None:
    data = holder.render().encode()
    os.pwrite(fd, data, 0)  # write, then cut: a reader never sees an empty file in between
    os.ftruncate(fd, len(data))
