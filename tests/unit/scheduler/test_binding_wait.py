"""PreBind's wait for binding conditions: woken by claim updates, ended by one timer (looptime: no real waiting).

The wall clock the allocation timestamps are compared with follows the
event loop's (fake) clock, so a timeout is reached exactly when looptime
advances there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from services.kube.times import time_text
from services.scheduler.dra.binding_conditions import DeviceBindingFailedError, DeviceBindingTimeoutError
from services.scheduler.dra.binding_metrics import BindingConditionsMetrics
from services.scheduler.dra.binding_wait import BindingConditions, pending_event_message

Obj = dict[str, Any]
EPOCH = datetime(2026, 12, 2, 7, 0, 0, tzinfo=UTC)
POD: Obj = {"metadata": {"name": "p", "namespace": "default", "uid": "u"}}


def claim(name: str = "c", *, conditions: list[tuple[str, str]] | None = None, binding: bool = True) -> Obj:
    result: Obj = {"request": "r", "driver": "d", "pool": "p", "device": "dev"}
    if binding:
        result |= {"bindingConditions": ["attached"], "bindingFailureConditions": ["failed"]}
    status: Obj = {"allocation": {"devices": {"results": [result]}, "allocationTimestamp": time_text(EPOCH)}}
    if conditions is not None:
        status["devices"] = [
            {
                "driver": "d",
                "pool": "p",
                "device": "dev",
                "conditions": [{"type": t, "status": s} for t, s in conditions],
            }
        ]
    return {"metadata": {"name": name, "namespace": "default"}, "status": status}


class Claims:
    """An informer-fed store: ``put`` stores and tells the waiter, as the plugin's observe does."""

    def __init__(self, waiter: BindingConditions, *claims: Obj) -> None:
        self.waiter = waiter
        self.objs = {c["metadata"]["name"]: c for c in claims}
        self.reads = 0

    def get(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        self.reads += 1
        return self.objs.get(name)

    def put(self, obj: Obj) -> None:
        self.objs[obj["metadata"]["name"]] = obj
        self.waiter.observe(obj)


async def settle() -> None:
    """Let woken tasks run (no time passes)."""
    for _ in range(5):
        await asyncio.sleep(0)


def waiter(timeout: float = 600.0) -> BindingConditions:
    loop = asyncio.get_running_loop()
    start = loop.time()
    return BindingConditions(enabled=True, timeout=timeout, now=lambda: EPOCH + timedelta(seconds=loop.time() - start))


@pytest.mark.looptime
async def test_the_wait_ends_on_the_update_that_sets_the_condition_true() -> None:
    w = waiter()
    events: list[tuple[str, str]] = []
    w.on_wait = lambda pod, node: events.append((pod["metadata"]["name"], pending_event_message(node)))
    claims = Claims(w, claim())
    loop = asyncio.get_running_loop()
    start = loop.time()
    task = asyncio.create_task(w.wait([claim()], claims.get, pod=POD, node_name="n1"))
    await asyncio.sleep(30)  # looptime: no update for 30 fake seconds, nothing re-reads the claim
    assert not task.done() and claims.reads == 1 and w.waiting() == 1
    claims.put(claim("other"))  # another claim: nobody wakes
    await settle()
    assert claims.reads == 1
    claims.put(claim(conditions=[("attached", "False")]))  # woken, still not ready
    await settle()
    assert claims.reads == 2 and not task.done()
    ready = claim(conditions=[("attached", "True")])
    claims.put(ready)
    assert await task == [ready]
    assert loop.time() - start == pytest.approx(30)
    assert events == [("p", "waiting for binding conditions for device on node n1")]
    assert w.waiting() == 0


@pytest.mark.looptime
async def test_a_failure_condition_ends_the_wait_with_device_binding_failed() -> None:
    w = waiter()
    claims = Claims(w, claim())
    task = asyncio.create_task(w.wait([claim()], claims.get, pod=POD, node_name="n1"))
    await asyncio.sleep(1)
    claims.put(claim(conditions=[("failed", "True")]))
    with pytest.raises(DeviceBindingFailedError, match=r'^device binding failed: claim=c, reason=, message=""$'):
        await task
    assert w.waiting() == 0


@pytest.mark.looptime
async def test_the_timer_ends_the_wait_at_binding_timeout() -> None:
    w = waiter(timeout=5.0)
    claims = Claims(w, claim())
    loop = asyncio.get_running_loop()
    start = loop.time()
    with pytest.raises(DeviceBindingTimeoutError, match=r"^device binding timeout: context deadline exceeded$"):
        await w.wait([claim()], claims.get, pod=POD, node_name="n1")
    assert loop.time() - start == pytest.approx(5.0)
    assert claims.reads == 1  # nothing polled
    assert w.waiting() == 0


@pytest.mark.looptime
async def test_claims_without_binding_conditions_do_not_wait() -> None:
    w = waiter()
    plain = claim(binding=False)
    w.on_wait = lambda pod, node: pytest.fail("no Event without binding conditions")
    assert await w.wait([plain], Claims(w).get, pod=POD, node_name="n1") == [plain]


async def test_disabled_does_nothing() -> None:
    w = BindingConditions(enabled=False)
    pending = claim()
    assert await w.wait([pending], lambda ns, n: None, pod=POD, node_name="n1") == [pending]
    assert w.stamp({"devices": {}}) == {"devices": {}}
    old = claim(conditions=[("failed", "True")])
    assert not w.unavailable(old)


def test_stamp_sets_the_allocation_timestamp_once() -> None:
    w = BindingConditions(enabled=True, now=lambda: EPOCH)
    assert w.stamp({"devices": {}}) == {"devices": {}, "allocationTimestamp": "2026-12-02T07:00:00Z"}
    kept = {"devices": {}, "allocationTimestamp": "2026-12-01T00:00:00Z"}
    assert w.stamp(kept) is kept


@pytest.mark.looptime
async def test_a_claim_that_goes_away_ends_the_wait() -> None:
    w = waiter()
    claims = Claims(w, claim())
    task = asyncio.create_task(w.wait([claim()], claims.get, pod=POD, node_name="n1"))
    await asyncio.sleep(1)
    del claims.objs["c"]
    w.observe(claim())
    with pytest.raises(LookupError, match='resourceclaim "c" not found'):
        await task


@pytest.mark.looptime
async def test_every_wait_reports_how_it_ended_and_how_long_it_took() -> None:
    w = waiter(timeout=5.0)
    done: list[tuple[str, float]] = []
    w.on_done = lambda claims, status, seconds: done.append((status, seconds))
    claims = Claims(w, claim())
    task = asyncio.create_task(w.wait([claim()], claims.get, pod=POD, node_name="n1"))
    await asyncio.sleep(2)
    claims.put(claim(conditions=[("attached", "True")]))
    await task
    with pytest.raises(DeviceBindingTimeoutError):
        await w.wait([claim("t")], Claims(w, claim("t")).get, pod=POD, node_name="n1")
    failing = Claims(w, claim("f", conditions=[("failed", "True")]))
    with pytest.raises(DeviceBindingFailedError):
        await w.wait([claim("f")], failing.get, pod=POD, node_name="n1")
    assert done == [("success", pytest.approx(2.0)), ("timeout", pytest.approx(5.0)), ("failure", 0.0)]


def test_binding_condition_metrics_count_devices_with_conditions_and_time_every_device() -> None:
    registry = CollectorRegistry()
    metrics = BindingConditionsMetrics(registry, profile="default-scheduler")
    plain = claim("plain", binding=False)
    metrics.record([claim(conditions=[("attached", "True")]), plain], "success", 1.5)
    labels = {"profile": "default-scheduler", "driver": "d", "status": "success"}
    assert registry.get_sample_value("scheduler_dra_bindingconditions_allocations_total", labels) == 1.0
    assert registry.get_sample_value("scheduler_dra_bindingconditions_wait_duration_seconds_count", labels) == 2.0
    assert registry.get_sample_value("scheduler_dra_bindingconditions_wait_duration_seconds_sum", labels) == 3.0
