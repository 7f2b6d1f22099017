"""Allocations per second of the structured allocator on one node.

The scheduler builds one `Allocator` per pod and calls ``allocate(node)`` per
candidate node. This benchmark measures that call on a node with 8 and with
128 GPUs, for a few typical claims, *cold* (fresh `SelectorCache` and
`SliceIndex` per pod: every selector is evaluated once per device) and
*warm* (both shared across pods, as the scheduler plugin keeps them while the
slices do not change). Prints throughput and latency percentiles (constructor
plus ``allocate``); it never asserts a time.

    .venv/bin/python ops/bench/allocator.py [--seconds S]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from services.kube.structured import Allocator, SelectorCache, SliceIndex

DRIVER = "gpu.example.com"
Obj = dict[str, Any]

GPU_CLASS: Obj = {
    "metadata": {"name": "gpu"},
    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
}
NODE: Obj = {"metadata": {"name": "node-1", "labels": {"region": "r1"}}}


def gpus(count: int) -> list[Obj]:
    devices = []
    for i in range(count):
        devices.append(
            {
                "name": f"gpu-{i}",
                "basic": {
                    "attributes": {
                        "model": {"string": "a100" if i % 4 else "h100"},
                        "numa": {"int": i % 2},
                        "driverVersion": {"version": "1.2.3"},
                        "index": {"int": i},
                    },
                    "capacity": {"memory": {"value": "80Gi" if i % 2 else "40Gi"}},
                },
            }
        )
    return devices


def node_slice(count: int) -> Obj:
    return {
        "metadata": {"name": f"node-1-{DRIVER}", "resourceVersion": "7"},
        "spec": {
            "driver": DRIVER,
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
            "devices": gpus(count),
        },
    }


def claim(*requests: Obj, constraints: list[Obj] | None = None) -> Obj:
    devices: Obj = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return {"metadata": {"name": "claim", "namespace": "default"}, "spec": {"devices": devices}}


def request(name: str, count: int, *selectors: str) -> Obj:
    return {
        "name": name,
        "deviceClassName": "gpu",
        "allocationMode": "ExactCount",
        "count": count,
        "selectors": [{"cel": {"expression": s}} for s in selectors],
    }


A = f'device.attributes["{DRIVER}"]'
SCENARIOS: dict[str, tuple[list[Obj], Callable[[int], frozenset[tuple[str, str, str]]]]] = {
    "1 gpu, model selector": (
        [claim(request("gpu", 1, f'{A}.model == "a100"'))],
        lambda n: frozenset(),
    ),
    "2 gpus, memory + semver selectors": (
        [
            claim(
                request(
                    "gpu",
                    2,
                    f'device.capacity["{DRIVER}"].memory.compareTo(quantity("64Gi")) >= 0',
                    f'{A}.driverVersion.isGreaterThan(semver("1.0.0"))',
                )
            )
        ],
        lambda n: frozenset(),
    ),
    "4 gpus, same NUMA (matchAttribute)": (
        [claim(request("gpu", 4, f'{A}.model == "a100"'), constraints=[{"matchAttribute": f"{DRIVER}/numa"}])],
        lambda n: frozenset(),
    ),
    "1 gpu, 3/4 of the node in use": (
        [claim(request("gpu", 1))],
        lambda n: frozenset((DRIVER, "node-1", f"gpu-{i}") for i in range(n * 3 // 4)),
    ),
    "9 h100 (none on the 8-GPU node)": (
        [claim(request("gpu", 9, f'{A}.model == "h100"'))],
        lambda n: frozenset(),
    ),
}


def run(claims: list[Obj], allocated: frozenset[Any], slices: list[Obj], seconds: float, shared: bool) -> list[float]:
    cache = SelectorCache() if shared else None
    index = SliceIndex(slices) if shared else None
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        allocator = Allocator(claims, allocated, [GPU_CLASS], index or slices, cache=cache)
        allocator.allocate(NODE)
        latencies.append(time.perf_counter() - start)
    return latencies


def report(label: str, latencies: list[float]) -> str:
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1e6
    p99 = latencies[min(len(latencies) - 1, len(latencies) * 99 // 100)] * 1e6
    rate = len(latencies) / sum(latencies)
    return f"{label:5} {rate:10.0f}/s  p50 {p50:8.1f} µs  p99 {p99:8.1f} µs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="per scenario and mode")
    args = parser.parse_args()
    for devices in (8, 128):
        slices = [node_slice(devices)]
        print(f"node with {devices} devices")
        for name, (claims, allocated_for) in SCENARIOS.items():
            allocated = allocated_for(devices)
            outcome = Allocator(claims, allocated, [GPU_CLASS], slices).allocate(NODE)
            status = "allocated" if outcome else "no solution"
            cold = run(claims, allocated, slices, args.seconds, shared=False)
            warm = run(claims, allocated, slices, args.seconds, shared=True)
            print(f"  {name} ({status})")
            print(f"    {report('cold', cold)}")
            speed_up = statistics.median(cold) / statistics.median(warm)
            print(f"    {report('warm', warm)}   warm/cold speed-up {speed_up:.1f}x")


if __name__ == "__main__":
    main()
