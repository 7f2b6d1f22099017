"""kube-scheduler's metrics, with kube's names, on a caller-supplied registry.

Dashboards and alerts written for kube-scheduler (``scheduler_schedule_attempts_total``,
``scheduler_pending_pods``, ``scheduler_queue_incoming_pods_total`` …) work
unchanged against draplane. The registry is passed in so tests and several
schedulers in one process never share the global default registry.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


def _exponential(start: float, factor: float, count: int) -> tuple[float, ...]:
    return tuple(start * factor**i for i in range(count))


SCHEDULED = "scheduled"
UNSCHEDULABLE = "unschedulable"
ERROR = "error"


class SchedulerMetrics:
    """The metric families of kube-scheduler 1.31 that draplane records."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
            "scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=registry,
        )
        self.scheduling_attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=_exponential(0.001, 2, 15),
            registry=registry,
        )
        self.scheduling_algorithm_duration = Histogram(
            "scheduler_scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds",
            buckets=_exponential(0.001, 2, 15),
            registry=registry,
        )
        self.pending_pods = Gauge(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' "
            "means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that "
            "the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that "
            "the scheduler never attempted to schedule because they are gated.",
            ["queue"],
            registry=registry,
        )
        self.queue_incoming_pods = Counter(
            "scheduler_queue_incoming_pods",
            "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"],
            registry=registry,
        )
        self.pod_scheduling_attempts = Histogram(
            "scheduler_pod_scheduling_attempts",
            "Number of attempts to successfully schedule a pod.",
            buckets=_exponential(1, 2, 5),
            registry=registry,
        )
        self.pod_scheduling_sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and "
            "might involve multiple scheduling attempts.",
            ["attempts"],
            buckets=_exponential(0.01, 2, 20),
            registry=registry,
        )
        self.framework_extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            buckets=_exponential(0.0001, 2, 12),
            registry=registry,
        )
        self.unschedulable_pods = Gauge(
            "scheduler_unschedulable_pods",
            "The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for "
            "all plugins that caused it to not schedule and so this metric have meaning only when broken down "
            "by plugin.",
            ["plugin", "profile"],
            registry=registry,
        )
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts",
            "Total preemption attempts in the cluster till now",
            registry=registry,
        )
        self.cache_size = Gauge(
            "scheduler_scheduler_cache_size",
            "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
            ["type"],
            registry=registry,
        )
        self.queueing_hint_execution_duration = Histogram(
            "scheduler_queueing_hint_execution_duration_seconds",
            "Duration for running a queueing hint function of a plugin.",
            ["plugin", "event", "hint"],
            buckets=_exponential(0.000001, 2, 12),
            registry=registry,
        )

        # Label children looked up once: the queue and the cache report on every change.
        self._pending = {q: self.pending_pods.labels(queue=q) for q in ("active", "backoff", "unschedulable", "gated")}
        self._cache = {t: self.cache_size.labels(type=t) for t in ("nodes", "pods", "assumed_pods")}
        # The values last set: most changes leave the sizes as they were, and a gauge set is not free.
        self._pending_set: tuple[int, int, int, int] | None = None
        self._cache_set: tuple[int, int, int] | None = None

    # -- the QueueMetrics protocol used by queue.py

    def queue_incoming(self, queue: str, event: str) -> None:
        self.queue_incoming_pods.labels(queue=queue, event=event).inc()

    def set_pending(self, active: int, backoff: int, unschedulable: int, gated: int) -> None:
        values = (active, backoff, unschedulable, gated)
        if values == self._pending_set:
            return
        self._pending_set = values
        pending = self._pending
        pending["active"].set(active)
        pending["backoff"].set(backoff)
        pending["unschedulable"].set(unschedulable)
        pending["gated"].set(gated)

    def set_cache_size(self, nodes: int, pods: int, assumed_pods: int) -> None:
        values = (nodes, pods, assumed_pods)
        if values == self._cache_set:
            return
        self._cache_set = values
        cache = self._cache
        cache["nodes"].set(nodes)
        cache["pods"].set(pods)
        cache["assumed_pods"].set(assumed_pods)

    def unschedulable_reason(self, plugin: str, profile: str, delta: int) -> None:
        self.unschedulable_pods.labels(plugin=plugin, profile=profile).inc(delta)

    # -- scheduling results

    def pod_scheduled(self, profile: str, duration: float) -> None:
        self.schedule_attempts.labels(result=SCHEDULED, profile=profile).inc()
        self.scheduling_attempt_duration.labels(result=SCHEDULED, profile=profile).observe(duration)

    def pod_unschedulable(self, profile: str, duration: float) -> None:
        self.schedule_attempts.labels(result=UNSCHEDULABLE, profile=profile).inc()
        self.scheduling_attempt_duration.labels(result=UNSCHEDULABLE, profile=profile).observe(duration)

    def pod_schedule_error(self, profile: str, duration: float) -> None:
        self.schedule_attempts.labels(result=ERROR, profile=profile).inc()
        self.scheduling_attempt_duration.labels(result=ERROR, profile=profile).observe(duration)

    def pod_bound(self, attempts: int, since_first_queued: float) -> None:
        self.pod_scheduling_attempts.observe(attempts)
        self.pod_scheduling_sli_duration.labels(attempts=str(attempts)).observe(since_first_queued)

    def extension_point(self, extension_point: str, status: str, profile: str, duration: float) -> None:
        self.framework_extension_point_duration.labels(
            extension_point=extension_point, status=status, profile=profile
        ).observe(duration)
