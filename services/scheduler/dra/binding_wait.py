"""PreBind's wait for device binding conditions, woken by claim updates instead of polling.

Kubernetes' PreBind polls the claims every 5 s until ``bindingTimeout``.
Here the plugin hands every claim change the informer delivers to
`BindingConditions.observe`, which wakes the binding cycles waiting on that
claim; each then re-reads its claims and checks them with the rules of
`services.scheduler.dra.binding_conditions`. A single timer per waiting pod
ends the wait at ``bindingTimeout``. Waiting happens in the pod's binding
cycle (its own task), so other pods keep being scheduled meanwhile.

The class also holds the plugin's other binding-condition duties, so that
DynamicResources only calls it: the ``allocationTimestamp`` PreBind writes,
and Filter's verdict on an allocated claim that failed or timed out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from services.kube.times import time_text
from services.scheduler.dra.binding_conditions import (
    DEFAULT_BINDING_TIMEOUT,
    DeviceBindingFailedError,
    DeviceBindingTimeoutError,
    has_binding_conditions,
    pod_ready_for_binding,
    unavailable_for_binding,
)
from services.scheduler.dra.binding_metrics import STATUS_ERROR, STATUS_FAILED, STATUS_SUCCESS, STATUS_TIMEOUT

ClaimKey = tuple[str, str]  # (namespace, name)
Getter = Callable[[str, str], Mapping[str, Any] | None]

EVENT_REASON_PENDING = "BindingConditionsPending"
"""The Normal Event PreBind records on the pod before waiting (``Eventf(..., "BindingConditionsPending", ...)``)."""


def pending_event_message(node_name: str) -> str:
    return f"waiting for binding conditions for device on node {node_name}"


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _key(claim: Mapping[str, Any]) -> ClaimKey:
    meta = claim.get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


class BindingConditions:
    """DRADeviceBindingConditions in the DynamicResources plugin; ``enabled`` False makes every method a no-op.

    ``timeout`` is DynamicResourcesArgs' ``bindingTimeout`` in seconds; ``now``
    is the wall clock the allocation timestamps are compared with (tests
    inject one); the wait's own timer runs on the event loop's clock.
    """

    def __init__(
        self,
        *,
        enabled: bool,
        timeout: float = DEFAULT_BINDING_TIMEOUT,
        now: Callable[[], datetime] = _utcnow,
    ) -> None:
        self.enabled = enabled
        self.timeout = timeout
        self.now = now
        self._waiters: dict[ClaimKey, set[asyncio.Event]] = {}
        self.on_wait: Callable[[Mapping[str, Any], str], None] | None = None  # (pod, node): the Pending Event
        # (claims as last read, status label, seconds waited) once a wait ends: the binding-condition metrics
        self.on_done: Callable[[Sequence[Mapping[str, Any]], str, float], None] | None = None

    # ------------------------------------------------------------ informer

    def observe(self, claim: Mapping[str, Any] | None) -> None:
        """A claim changed (informer): wake the binding cycles waiting on it."""
        if claim is None or not self._waiters:
            return
        for event in self._waiters.get(_key(claim), ()):
            event.set()

    def waiting(self) -> int:
        """How many claims binding cycles are waiting on (for tests and metrics)."""
        return len(self._waiters)

    # ---------------------------------------------------- Filter and PreBind

    def stamp(self, alloc: Mapping[str, Any]) -> Mapping[str, Any]:
        """The allocation PreBind writes: with ``allocationTimestamp`` set if it has none yet."""
        if not self.enabled or alloc.get("allocationTimestamp"):
            return alloc
        return {**alloc, "allocationTimestamp": time_text(self.now())}

    def unavailable(self, claim: Mapping[str, Any]) -> bool:
        """Filter: an allocated claim whose binding failed or timed out is not available on any node."""
        return self.enabled and unavailable_for_binding(claim, timeout=self.timeout, now=self.now())

    def would_wait(self, claims: Sequence[Mapping[str, Any]]) -> bool:
        """Whether `wait` would wait for these claims: an allocated device has binding conditions."""
        return self.enabled and has_binding_conditions(claims)

    async def wait(
        self, claims: Sequence[Mapping[str, Any]], get: Getter, *, pod: Mapping[str, Any], node_name: str
    ) -> list[Mapping[str, Any]]:
        """Wait until every binding condition of the claims' devices is True; the claims as last read.

        Returns at once when no allocated device has binding conditions.
        Raises `DeviceBindingFailedError` when a failure condition turns True,
        `DeviceBindingTimeoutError` when ``timeout`` runs out (or a claim's
        allocation is older than that), and LookupError for a claim that is gone.
        """
        if not self.would_wait(claims):
            return list(claims)
        if self.on_wait is not None:
            self.on_wait(pod, node_name)
        keys = [_key(claim) for claim in claims]
        loop = asyncio.get_running_loop()
        start = loop.time()
        deadline = start + self.timeout
        woken = asyncio.Event()
        for key in keys:
            self._waiters.setdefault(key, set()).add(woken)
        current: list[Mapping[str, Any]] = list(claims)
        label = STATUS_ERROR
        try:
            while True:
                woken.clear()
                read = []
                for namespace, name in keys:
                    claim = get(namespace, name)
                    if claim is None:
                        raise LookupError(f'resourceclaim "{name}" not found')
                    read.append(claim)
                current = read
                if pod_ready_for_binding(current, timeout=self.timeout, now=self.now()):
                    label = STATUS_SUCCESS
                    return current
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise DeviceBindingTimeoutError()
                try:
                    await asyncio.wait_for(woken.wait(), remaining)
                except TimeoutError:
                    raise DeviceBindingTimeoutError() from None
        except DeviceBindingTimeoutError:
            label = STATUS_TIMEOUT
            raise
        except DeviceBindingFailedError:
            label = STATUS_FAILED
            raise
        finally:
            if self.on_done is not None:
                self.on_done(current, label, loop.time() - start)
            for key in keys:
                events = self._waiters.get(key)
                if events is not None:
                    events.discard(woken)
                    if not events:
                        del self._waiters[key]
