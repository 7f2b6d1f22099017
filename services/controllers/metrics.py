"""Prometheus metrics of the controller-manager, on a registry of its own.

Why this module exists: Kubernetes' resourceclaim controller exports
``resourceclaim_controller_create_attempts_total``,
``resourceclaim_controller_create_failures_total`` and, since 1.32, gauges of
claims and allocated claims, and the device-taint-eviction controller (1.37)
``device_taint_eviction_controller_pod_deletions_total`` and
``..._pod_deletion_duration_seconds``; dashboards written for Kubernetes should read
draplane unchanged. The garbage collector's counters are draplane's own. Each
`ControllerMetrics` has its own `CollectorRegistry`, so several controller
managers (tests, benchmarks) can live in one process; the manager serves it on
``/metrics`` next to the process-wide runtime metrics.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import registry as prom_registry


class ControllerMetrics:
    """The controller-manager's metrics (see module docstring)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.create_attempts = Counter(
            "resourceclaim_controller_create_attempts",
            "Number of ResourceClaims creation requests",
            registry=self.registry,
        )
        self.create_failures = Counter(
            "resourceclaim_controller_create_failures",
            "Number of ResourceClaims creation request failures",
            registry=self.registry,
        )
        self.resource_claims = Gauge(
            "resourceclaim_controller_resource_claims",
            "Number of ResourceClaims",
            registry=self.registry,
        )
        self.allocated_resource_claims = Gauge(
            "resourceclaim_controller_allocated_resource_claims",
            "Number of allocated ResourceClaims",
            registry=self.registry,
        )
        self.taint_pod_deletions = Counter(
            "device_taint_eviction_controller_pod_deletions",
            "Total number of Pods deleted by DeviceTaintEvictionController since its start.",
            registry=self.registry,
        )
        self.taint_pod_deletion_latency = Histogram(
            "device_taint_eviction_controller_pod_deletion_duration_seconds",
            "Latency, in seconds, between the time when a device taint effect has been activated and a Pod's "
            "deletion via DeviceTaintEvictionController.",
            buckets=(0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 60, 120, 180, 240),
            registry=self.registry,
        )
        self.sync_errors = Counter(
            "draplane_controller_sync_errors",
            "Work items whose sync failed and were requeued, by controller.",
            ["controller"],
            registry=self.registry,
        )
        self.gc_deletes = Counter(
            "draplane_garbagecollector_deletes",
            "Dependents the garbage collector deleted, by resource and propagation policy.",
            ["resource", "policy"],
            registry=self.registry,
        )
        self.gc_owner_references_removed = Counter(
            "draplane_garbagecollector_owner_references_removed",
            "Objects whose ownerReferences the garbage collector trimmed (orphaning or dangling owners).",
            ["resource"],
            registry=self.registry,
        )
        self.gc_finalizers_removed = Counter(
            "draplane_garbagecollector_finalizers_removed",
            "foregroundDeletion and orphan finalizers the garbage collector removed.",
            ["finalizer"],
            registry=self.registry,
        )

    def sync_failed(self, controller: str) -> Callable[[object, Exception], Awaitable[None]]:
        """The worker loop's ``on_failure`` for ``controller``: count the failed sync."""
        counter = self.sync_errors.labels(controller=controller)

        async def count(_key: object, _err: Exception) -> None:
            counter.inc()

        return count

    def exposition(self, *, include_process: bool = True) -> bytes:
        """The text exposition of these metrics (and the process-wide runtime ones) for ``/metrics``."""
        text = generate_latest(self.registry)
        if include_process:
            text = generate_latest(prom_registry.REGISTRY) + text
        return text
