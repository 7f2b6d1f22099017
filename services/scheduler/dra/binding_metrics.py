"""kube-scheduler's binding-condition metrics (alpha, registered only with DRADeviceBindingConditions on).

``scheduler_dra_bindingconditions_allocations_total`` counts, per driver, the
devices with binding conditions a PreBind waited for, by how the wait ended;
``scheduler_dra_bindingconditions_wait_duration_seconds`` observes the wait
once per allocated device of the pod's claims (kube's PreBind records both
that way, with the labels ``profile``, ``driver`` and ``status``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram

from services.kube.resourceclaim import allocation
from services.scheduler.dra.binding_conditions import binding_conditions_status

STATUS_SUCCESS = "success"
STATUS_FAILED = "failure"
STATUS_TIMEOUT = "timeout"
STATUS_ERROR = "error"


class BindingConditionsMetrics:
    def __init__(self, registry: CollectorRegistry, *, profile: str) -> None:
        self.profile = profile
        self.allocations = Counter(
            "scheduler_dra_bindingconditions_allocations",
            "Number of allocations using devices with BindingConditions, counted per driver per scheduling attempt",
            ["profile", "driver", "status"],
            registry=registry,
        )
        self.wait_duration = Histogram(
            "scheduler_dra_bindingconditions_wait_duration_seconds",
            "Time in seconds spent waiting for BindingConditions to be satisfied during PreBind.",
            ["profile", "driver", "status"],
            buckets=tuple(0.1 * 2**i for i in range(14)),
            registry=registry,
        )

    def record(self, claims: Sequence[Mapping[str, Any]], status: str, duration: float) -> None:
        """One PreBind wait that ended with ``status`` after ``duration`` seconds, over the claims as last read."""
        for claim in claims:
            alloc = allocation(claim)
            if alloc is None:
                continue
            for result in (alloc.get("devices") or {}).get("results") or ():
                self.wait_duration.labels(self.profile, str(result.get("driver", "")), status).observe(duration)
            for device in binding_conditions_status(claim):
                self.allocations.labels(self.profile, device.driver, status).inc()
