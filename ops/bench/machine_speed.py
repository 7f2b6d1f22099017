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
"""

from __future__ import annotations

import gc
import time
from typing import Any

import orjson

ROUNDS = 7
OBJECTS = 1500  # per round: ~10 ms of work on this machine kind


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


def text(before_ms: float, after_ms: float) -> str:
    """The report line's value: both timings, so a phase change during the window shows."""
    return (
        f"reference {before_ms:.2f} ms before the window, {after_ms:.2f} ms after "
        f"(fixed Python work, fastest of {ROUNDS}; lower is faster)"
    )
