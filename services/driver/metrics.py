"""Prometheus metrics of one driver, on a registry of its own.

Why this module exists: operators want to see how often claims are prepared
and unprepared (and how often that fails), how many claims are prepared now,
how many slice writes publishing took and what the classic controller did.
Each `DriverMetrics` has its own `CollectorRegistry`, so several drivers (one
per node in ``draplane up``, or in tests) can live in one process.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client import registry as prom_registry


class DriverMetrics:
    """The driver's metrics (see module docstring)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.prepare = Counter(
            "draplane_driver_prepare",
            "NodePrepareResources outcomes per claim: prepared, already_prepared or error.",
            ["driver", "outcome"],
            registry=self.registry,
        )
        self.unprepare = Counter(
            "draplane_driver_unprepare",
            "NodeUnprepareResources outcomes per claim: unprepared, not_prepared or error.",
            ["driver", "outcome"],
            registry=self.registry,
        )
        self.prepared_claims = Gauge(
            "draplane_driver_prepared_claims",
            "Claims currently prepared on this node (completed checkpoint entries).",
            ["driver"],
            registry=self.registry,
        )
        self.slice_writes = Counter(
            "draplane_driver_resourceslice_writes",
            "ResourceSlice writes by operation (create, update, delete).",
            ["driver", "op"],
            registry=self.registry,
        )
        self.allocations = Counter(
            "draplane_driver_classic_allocations",
            "Classic (control-plane) allocation and deallocation outcomes.",
            ["driver", "outcome"],
            registry=self.registry,
        )

    def exposition(self, *, include_process: bool = True) -> bytes:
        """The text exposition of these metrics (and the process-wide runtime ones) for ``/metrics``."""
        text = generate_latest(self.registry)
        if include_process:
            text = generate_latest(prom_registry.REGISTRY) + text
        return text
