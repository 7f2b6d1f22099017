"""How fast this machine runs Python right now: a fixed piece of work, timed, printed beside a benchmark's figures.

Why: on the 2-core machines these benchmarks run on, the same tree's steady-state
figures move by up to 1.8x within minutes (docs/decisions/latency.md, "Fourteenth
pass"), while the guest sees no steal time. Every process's CPU per pod moves
together, so it is the machine, not the code. A benchmark that prints this
reference before and after its window lets a reader tell a slow run of fast code
from a slow code path: compare the figure with the reference, not with a run from
another hour.

The work is what the control plane spends its time on: decoding and encoding
JSON objects with orjson, walking dicts and lists, formatting strings. It runs
single-threaded in the benchmark's own process while its children are idle
(before their window opens, after it closes); the figure is the fastest of a
few rounds, the one least disturbed by other load.

The speed moves within a window too, so a `Probe` also times it *during* one:
a process of its own does a fifteenth of that work every `PROBE_INTERVAL_S`
(~1 % of a core) and times each round in its own CPU time, which waiting for a
core does not inflate, only a slower core does. Its median, scaled to the
reference's work, is the window's figure (docs/decisions/latency.md,
"Fourteenth pass").

What swings is the core itself, not the share of it the guest gets (no steal
time is reported): the reference pinned to one vCPU took 1.58x as long once
while the other vCPU spun, and 0.97-1.22x in later tries, so the physical
core is at times shared with another hyperthread, ours or another tenant's.
Nothing in the guest controls that, and no one figure captures all of it: in
six runs with the probe at ~10 ms throughout, throughput still ranged 1.65x
and followed the reference before the window (5.7-6.3 ms in the faster
three, 9.5-9.9 in the slower).
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import orjson

ROUNDS = 7
OBJECTS = 1500  # per round: ~10 ms of work on this machine kind
PROBE_OBJECTS = OBJECTS // 15  # a probe's round: ~0.5 ms
PROBE_INTERVAL_S = 0.05


def _object(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"pod-{i:05d}",
            "namespace": "test",
            "labels": {"app": "bench", "index": str(i)},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": f"{i:032x}"}],
        },
        "spec": {
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"claims": [{"name": "gpu"}]}}
            ],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "template"}],
            "nodeName": "",
        },
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]},
    }


def _one_round(encoded: list[bytes]) -> int:
    """Decode, walk, change and encode every object; returns a checksum so no step can be skipped."""
    total = 0
    for raw in encoded:
        obj = orjson.loads(raw)
        meta = obj["metadata"]
        labels = {k: v for k, v in meta["labels"].items() if k != "index"}
        names = sorted(c["name"] for c in obj["spec"]["containers"])
        obj["spec"]["nodeName"] = f"node-{len(names)}-{len(labels)}"
        obj["status"]["conditions"] = [{**c, "status": "True"} for c in obj["status"]["conditions"]]
        total += len(orjson.dumps(obj)) + sum(len(k) + len(v) for k, v in labels.items())
    return total


def reference_ms(rounds: int = ROUNDS) -> float:
    """The fastest of ``rounds`` timings of the fixed work, in ms (lower is a faster machine)."""
    if rounds < 1:
        raise ValueError(f"at least one round is needed, not {rounds}")
    encoded = [orjson.dumps(_object(i)) for i in range(OBJECTS)]
    best = float("inf")
    collecting = gc.isenabled()
    gc.disable()  # a collection's cost depends on the caller's heap, not on the machine
    try:
        for _ in range(rounds):
            started = time.perf_counter()
            _one_round(encoded)
            best = min(best, time.perf_counter() - started)
    finally:
        if collecting:
            gc.enable()
    return best * 1000


def text(before_ms: float, after_ms: float, during_ms: float) -> str:
    """The report line's value: the timings before, during and after the window (a phase change shows)."""
    return (
        f"reference {before_ms:.2f} ms before the window, {during_ms:.2f} during it, {after_ms:.2f} after "
        f"(fixed Python work; before and after: fastest of {ROUNDS}; during: median CPU time of a probe; "
        "lower is faster)"
    )


def probe_rounds(stop: threading.Event, *, interval: float = PROBE_INTERVAL_S) -> list[float]:
    """Until ``stop`` is set: a probe round every ``interval`` seconds, each timed in this thread's CPU time and
    scaled to the reference's work (ms)."""
    encoded = [orjson.dumps(_object(i)) for i in range(PROBE_OBJECTS)]
    scale = OBJECTS / PROBE_OBJECTS
    timings: list[float] = []
    gc.disable()  # as in `reference_ms`; this process does nothing else
    while not stop.wait(interval):
        started = time.thread_time()
        _one_round(encoded)
        timings.append((time.thread_time() - started) * 1000 * scale)
    return timings


READY = "ready"


def probe_main() -> None:
    """The probe process: `READY` on stdout once started, rounds until its stdin closes, then their timings on
    stdout, one per line."""
    print(READY, flush=True)
    stop = threading.Event()

    def wait_for_eof() -> None:
        sys.stdin.buffer.read()
        stop.set()

    threading.Thread(target=wait_for_eof, daemon=True).start()
    for timing in probe_rounds(stop):
        print(f"{timing:.4f}")


class Probe:
    """A probe process timing the fixed work while a window runs (`start`, then `stop` for the median)."""

    def __init__(self, argv: Sequence[str] = (sys.executable, __file__)) -> None:
        self.argv = tuple(argv)  # the probe process's command (`probe_main`)
        self._proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        """Start the probe and return once it is ready: its interpreter's start-up is not the window's."""
        proc = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        assert proc.stdout is not None
        if (await proc.stdout.readline()).decode().strip() != READY:
            raise RuntimeError(f"the machine-speed probe exited before it was ready (status {await proc.wait()})")
        self._proc = proc

    async def stop(self) -> float:
        """The median of the rounds, in ms of the reference's work (NaN when no round ran)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return float("nan")
        out, _ = await proc.communicate(b"")
        timings = [float(line) for line in out.decode().split()]
        return statistics.median(timings) if timings else float("nan")


if __name__ == "__main__":
    probe_main()
