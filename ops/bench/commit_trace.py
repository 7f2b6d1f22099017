"""Commit → seen with microsecond stamps, on the embedded log (``latency.py``'s exact figure).

The log's append times are whole milliseconds, truncated (as Kafka's), and
taken inside the write transaction before its ``COMMIT``: ``commit → seen by
another process`` measured from them reads high by the truncation (0.5 ms on
average) and by the rest of the transaction after the append. This tracer
stamps what the issue's target names instead. In every process of the
benchmark it stamps, with ``time.time_ns()``, the moment each commit of a
transaction is announced to the other processes (right after ``COMMIT``),
beside the ``objects`` offsets that commit made visible; the benchmark's own
informer stamps each record as it applies it (`Seen`). Both clocks are the
machine's.

It is installed in the benchmark's child processes by the ``sitecustomize``
module in ``commit_trace_site/`` (on their ``PYTHONPATH``, active only when
``DRAPLANE_BENCH_COMMIT_TRACE`` names a directory), and wraps two functions of
the embedded log by name (``services.bus.embedded.producer.append``,
``services.bus.embedded.db._in_transaction_then``); the product's code is
unchanged. Each process writes its stamps to ``<dir>/<pid>.json`` as it exits.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

ENV = "DRAPLANE_BENCH_COMMIT_TRACE"
OBJECTS = "objects"


class Trace:
    """This process's announced commits: (objects offset, announce time ns), written to ``<dir>/<pid>.json``."""

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir / f"{os.getpid()}.json"
        self.commits: list[tuple[int, int]] = []

    def dump(self) -> None:
        with contextlib.suppress(OSError):
            self.path.write_bytes(orjson.dumps(self.commits))


_installed: tuple[Trace, Any, Any] | None = None  # the trace and the two functions it wraps


def install(out_dir: Path) -> Trace:
    """Stamp this process's announced commits; written to ``out_dir/<pid>.json`` at exit."""
    global _installed
    from services.bus.embedded import db, producer

    if _installed is not None:
        raise RuntimeError("the commit trace is already installed")
    trace = Trace(out_dir)
    appended: list[int] = []  # objects offsets of the write transaction in progress (one at a time per process)
    append = producer.append
    in_transaction_then = db._in_transaction_then

    def traced_append(conn: Any, records: Sequence[Any], **kwargs: Any) -> Any:
        result = append(conn, records, **kwargs)
        appended.extend(o for r, o in zip(records, result.offsets, strict=True) if r.topic == OBJECTS)
        return result

    def traced_in_transaction_then(conn: Any, then: Callable[[Any], None], fn: Any, *args: Any, **kwargs: Any) -> Any:
        appended.clear()

        def stamped(result: Any) -> None:
            now = time.time_ns()
            trace.commits.extend((offset, now) for offset in appended)
            then(result)

        return in_transaction_then(conn, stamped, fn, *args, **kwargs)

    producer.append = traced_append
    db._in_transaction_then = traced_in_transaction_then
    atexit.register(trace.dump)
    _installed = (trace, append, in_transaction_then)
    return trace


def uninstall() -> None:
    """Put the wrapped functions back (tests); the trace is not written."""
    global _installed
    from services.bus.embedded import db, producer

    if _installed is None:
        return
    trace, producer.append, db._in_transaction_then = _installed
    atexit.unregister(trace.dump)
    _installed = None


def install_from_env() -> None:
    out = os.environ.get(ENV)
    if out:
        install(Path(out))


def announced(out_dir: Path) -> dict[int, int]:
    """Every traced process's stamps: objects offset → announce time (ns)."""
    stamps: dict[int, int] = {}
    for path in sorted(out_dir.glob("*.json")):
        for offset, ns in orjson.loads(path.read_bytes()):
            stamps[int(offset)] = int(ns)
    return stamps


class Seen:
    """The benchmark informer's side: the time each objects offset was applied here (ns); the benchmark
    calls it for the records it measures."""

    def __init__(self) -> None:
        self.at: dict[int, int] = {}

    def __call__(self, offset: int) -> None:
        self.at[offset] = time.time_ns()

    def delivery_ms(self, announced: dict[int, int]) -> list[float]:
        """Announce → applied here, ms, for every offset seen that a traced commit made visible."""
        return [(ns - announced[o]) / 1e6 for o, ns in self.at.items() if o in announced]


def site_dir() -> Path:
    return Path(__file__).resolve().parent / "commit_trace_site"


def child_env(env: dict[str, str], out_dir: Path) -> dict[str, str]:
    """``env`` for a child process that traces its commits into ``out_dir``."""
    path = [str(site_dir()), *filter(None, [env.get("PYTHONPATH")])]
    return {**env, "PYTHONPATH": os.pathsep.join(path), ENV: str(out_dir)}
