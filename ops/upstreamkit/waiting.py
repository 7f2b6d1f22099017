"""Waiting for ``./ops/test``'s background build of the upstream binaries, for test fixtures.

Why this module exists: the first build of the upstream binaries takes many
minutes, so ``./ops/test`` starts it in the background before anything else
(``ops/upstream build``, low priority, its log under ``.cache/upstream/logs/``)
and the tests that need the binaries wait for it here. ``./ops/test`` exports:

- ``DRAPLANE_UPSTREAM_BUILD_STATUS``: a file the build writes its exit status
  to when it is done (the completion marker);
- ``DRAPLANE_UPSTREAM_BUILD_LOG``: the build's log, whose tail explains a failure;
- ``DRAPLANE_REQUIRE_UPSTREAM=1`` when Go is there: a missing binary then fails
  the test instead of skipping it (as ``DRAPLANE_REQUIRE_KAFKA`` does for Kafka).

Outside ``./ops/test`` (plain pytest) a missing binary skips the test with
``ops/upstream build`` as the remedy, after waiting for a build another
process holds the lock for. Standard library only.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ops.upstreamkit.build import DEFAULT_TARGETS, LOCK_NAME, Target, binary_path, go_binary
from ops.upstreamkit.versions import cache_root

STATUS_ENV = "DRAPLANE_UPSTREAM_BUILD_STATUS"
LOG_ENV = "DRAPLANE_UPSTREAM_BUILD_LOG"
REQUIRE_ENV = "DRAPLANE_REQUIRE_UPSTREAM"
# The first build on two loaded cores takes ~25 minutes; a test waits a while longer than that.
DEFAULT_TIMEOUT = 45 * 60.0


@dataclass(frozen=True)
class Unavailable:
    """Why the binaries cannot be had, and whether that is a failure (Go is there and ``./ops/test`` asks)."""

    reason: str
    required: bool


def _paths(targets: Sequence[Target]) -> tuple[dict[Target, Path], list[str]]:
    found: dict[Target, Path] = {}
    reasons: list[str] = []
    for target in targets:
        path, reason = binary_path(*target)
        if path is None:
            reasons.append(reason or f"{target} is missing")
        else:
            found[target] = path
    return found, reasons


def _log_tail(lines: int = 30) -> str:
    log = os.environ.get(LOG_ENV)
    if not log:
        return ""
    try:
        text = Path(log).read_text(errors="replace")
    except OSError:
        return f" (its log {log} cannot be read)"
    return f"; the build log {log} ends:\n" + "\n".join(text.splitlines()[-lines:])


def _wait_for_status(status: Path, *, deadline: float, poll: float) -> str | None:
    """The build's exit status once written, or None when the deadline passed first."""
    while True:
        try:
            text = status.read_text().strip()
        except OSError:
            text = ""
        if text:
            return text
        if time.monotonic() > deadline:
            return None
        time.sleep(poll)


def _wait_for_lock(*, deadline: float, poll: float) -> bool:
    """Waits until no process holds the build lock; False when the deadline passed first."""
    lock = cache_root() / LOCK_NAME
    if not lock.exists():
        return True
    with open(lock, "a") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(poll)
                continue
            fcntl.flock(handle, fcntl.LOCK_UN)
            return True


def wait_for_build(
    targets: Sequence[Target] = DEFAULT_TARGETS, *, timeout: float = DEFAULT_TIMEOUT, poll: float = 2.0
) -> dict[Target, Path] | Unavailable:
    """The binaries' paths once built, or why they are not there (see the module docstring).

    Returns at once when every binary is cached. Blocks (call it from a
    thread in async code) while ``./ops/test``'s build or another process's
    build runs, up to ``timeout`` seconds.
    """
    found, reasons = _paths(targets)
    if not reasons:
        return found
    has_go = go_binary() is not None
    required = has_go and os.environ.get(REQUIRE_ENV) == "1"
    deadline = time.monotonic() + timeout
    status_file = os.environ.get(STATUS_ENV)
    if status_file:
        status = _wait_for_status(Path(status_file), deadline=deadline, poll=poll)
        if status is None:
            return Unavailable(f"the upstream build did not finish within {timeout:.0f}s{_log_tail()}", required)
        found, reasons = _paths(targets)
        if not reasons:
            return found
        return Unavailable(f"the upstream build exited {status}: {'; '.join(reasons)}{_log_tail()}", required)
    if not has_go:
        return Unavailable("; ".join(reasons), False)
    if not _wait_for_lock(deadline=deadline, poll=poll):
        return Unavailable(f"another process's upstream build did not finish within {timeout:.0f}s", required)
    found, reasons = _paths(targets)
    return found if not reasons else Unavailable("; ".join(reasons), required)
