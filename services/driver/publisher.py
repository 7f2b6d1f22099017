"""Publishing the node's devices as ResourceSlices, and taking them down on decommission.

Why this module exists: a driver must keep its slices equal to what the
node has, whoever else touches them, the way the ResourceSlice controller of
``k8s.io/dynamic-resource-allocation`` does: a reconcile loop compares the
desired slices (`services.driver.slices`) with its own slices in the
informer (this node, this driver) and creates, updates and deletes until they
match. It wakes up when the devices change, when one of its slices changes,
and when its Node appears (for the owner reference); failed writes are
retried with backoff. Writes go through a client that authenticates as
``system:node:<name>``, so NodeRestriction confines it to its own node.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence

from services.api.machinery import status as st
from services.api.types.registry import RESOURCE_GROUP
from services.driver.metrics import DriverMetrics
from services.driver.slices import node_owner, plan_slices
from services.runtime import backoff
from services.runtime.client import Client
from services.runtime.informer import Informer, Obj
from services.runtime.lifecycle import raise_if_cancelling

log = logging.getLogger(__name__)

SLICES = "resourceslices"
NODE_INDEX = "spec.nodeName"


def _node_of(obj: Obj) -> list[str]:
    node = (obj.get("spec") or {}).get("nodeName")
    return [node] if node else []


class SlicePublisher:
    """Keeps ``driver``'s ResourceSlices for ``node`` equal to its devices."""

    def __init__(
        self,
        informer: Informer,
        client: Client,
        *,
        node: str,
        driver: str,
        metrics: DriverMetrics | None = None,
        max_backoff: float = 30.0,
    ) -> None:
        self.informer = informer
        self.client = client
        self.node = node
        self.driver = driver
        self.metrics = metrics or DriverMetrics()
        self.max_backoff = max_backoff
        self._devices: list[Obj] | None = None
        self._counters: list[Obj] = []
        self._generation = 0  # the highest pool generation this publisher wrote
        self._wake = asyncio.Event()
        self.in_sync = asyncio.Event()

    # -- wiring ---------------------------------------------------------------

    def register(self) -> None:
        self.informer.store(RESOURCE_GROUP, SLICES).add_index(NODE_INDEX, _node_of)
        self.informer.add_handler(RESOURCE_GROUP, SLICES, _Wake(self, lambda o: self._is_mine(o)))
        self.informer.add_handler("", "nodes", _Wake(self, lambda o: o["metadata"]["name"] == self.node))

    def _is_mine(self, obj: Obj) -> bool:
        spec = obj.get("spec") or {}
        return spec.get("nodeName") == self.node and spec.get("driver") == self.driver

    def own_slices(self) -> list[Obj]:
        """This node's slices of this driver, as the informer has them."""
        store = self.informer.store(RESOURCE_GROUP, SLICES)
        candidates: Iterable[Obj] = store.index(NODE_INDEX, self.node)
        return [s for s in candidates if (s.get("spec") or {}).get("driver") == self.driver]

    def set_devices(self, devices: Sequence[Obj] | None, *, shared_counters: Sequence[Obj] = ()) -> None:
        """Publish ``devices`` and counter sets (None: publish nothing)."""
        self._devices = None if devices is None else [dict(d) for d in devices]
        self._counters = [dict(c) for c in shared_counters]
        self.wake()

    def wake(self) -> None:
        self.in_sync.clear()
        self._wake.set()

    # -- the loop -------------------------------------------------------------

    async def run(self) -> None:
        retry = backoff.write_retry(cap=self.max_backoff)
        delay: float | None = None  # after a failed pass: how long to wait before the next
        while True:
            raise_if_cancelling()
            if delay is None:
                await self._wake.wait()
            else:
                # A change (a wake) ends the pause early, as an event re-queues a key at once in client-go.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):
                        await self._wake.wait()
            self._wake.clear()
            try:
                done = await self.reconcile()
            except st.StatusError as err:
                delay = retry.step()
                log.warning(
                    "publishing ResourceSlices failed; retrying",
                    extra={"node": self.node, "code": err.code, "error": str(err), "backoff": round(delay, 3)},
                )
                continue
            delay = None
            retry.reset()
            if done:
                self.in_sync.set()

    async def reconcile(self) -> bool:
        """One pass: write what differs; True when nothing was left to write."""
        if self._devices is None and not self.own_slices():
            return True
        node = self.informer.store("", "nodes").get("", self.node)
        plan = plan_slices(
            existing=self.own_slices(),
            node=self.node,
            driver=self.driver,
            devices=self._devices,
            owners=node_owner(node),
            last_generation=self._generation,
            shared_counters=self._counters,
        )
        if plan.empty:
            return True
        self._generation = max(self._generation, plan.generation)
        for obj in plan.creates:
            await self._write("create", self.client.create(RESOURCE_GROUP, SLICES, obj), already=409)
        for obj in plan.updates:
            await self._write("update", self.client.update(RESOURCE_GROUP, SLICES, obj), already=None)
        for name in plan.deletes:
            await self._write("delete", self.client.delete(RESOURCE_GROUP, SLICES, "", name), already=404)
        log.info(
            "published ResourceSlices",
            extra={
                "node": self.node,
                "generation": plan.generation,
                "creates": len(plan.creates),
                "updates": len(plan.updates),
                "deletes": len(plan.deletes),
            },
        )
        return False  # our writes come back through the informer and wake the loop to check again

    async def _write(self, op: str, call: Awaitable[Obj], *, already: int | None) -> None:
        try:
            await call
        except st.StatusError as err:
            if already is not None and err.code == already:
                return  # someone (a previous run) did it; the next pass sees the state
            raise
        self.metrics.slice_writes.labels(self.driver, op).inc()

    async def decommission(self, *, timeout: float = 30.0) -> None:
        """Delete all of this node's slices of this driver and wait until the informer shows none.

        Stop `run` first: a running loop would publish them again.
        """
        self._devices = None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        deleted: set[str] = set()
        while remaining := self.own_slices():
            self._wake.clear()
            for obj in remaining:
                name = obj["metadata"]["name"]
                if name in deleted:
                    continue
                try:
                    await self.client.delete(RESOURCE_GROUP, SLICES, "", name)
                    self.metrics.slice_writes.labels(self.driver, "delete").inc()
                except st.StatusError as err:
                    if err.code != 404:
                        raise
                deleted.add(name)
            if not self.own_slices():
                break
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError(f"ResourceSlices of node {self.node} are still there")
            # The informer wakes us when it applies a delete of one of our slices.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await self._wake.wait()
        log.info("decommissioned: ResourceSlices deleted", extra={"node": self.node, "driver": self.driver})


class _Wake:
    """Informer handler that wakes the publisher for objects ``relevant`` says matter."""

    def __init__(self, publisher: SlicePublisher, relevant: Callable[[Obj], bool]) -> None:
        self.publisher = publisher
        self.relevant = relevant

    def _maybe(self, obj: Obj) -> None:
        if self.relevant(obj):
            self.publisher.wake()

    def on_add(self, obj: Obj) -> None:
        self._maybe(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self._maybe(new)

    def on_delete(self, obj: Obj) -> None:
        self._maybe(obj)
