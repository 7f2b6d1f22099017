"""The ``PodScheduled=False`` condition of a pod the scheduler could not place.

kube-scheduler's ``updatePod`` writes the condition after every failed attempt,
but only when it changes (``podutil.UpdatePodCondition``: same status, reason
and message is no change), and keeps ``lastTransitionTime`` while the status
stays the same. It writes with a strategic-merge patch of ``status``, which
merges ``conditions`` by ``type`` and needs no resourceVersion, so a kubelet
or controller writing other parts of the status never makes it conflict.

The write is one committer round trip, which must not hold up the scheduling
loop: ``ConditionWriter.submit`` records the wanted condition and a task per
pod writes it. A second failure of the same pod while a write is in flight
only replaces the wanted condition; the task writes the newest one next.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from services.api.machinery.status import StatusError
from services.kube.times import time_text
from services.runtime.client import Client

log = logging.getLogger(__name__)

POD_SCHEDULED = "PodScheduled"


def scheduled_condition(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == POD_SCHEDULED:
            return condition
    return None


def condition_patch(pod: Mapping[str, Any], *, reason: str, message: str, now: datetime) -> dict[str, Any] | None:
    """The status patch that sets ``PodScheduled=False``, or None when the pod already says so."""
    current = scheduled_condition(pod)
    if (
        current is not None
        and current.get("status") == "False"
        and current.get("reason") == reason
        and current.get("message") == message
    ):
        return None
    transition = time_text(now)
    if current is not None and current.get("status") == "False" and current.get("lastTransitionTime"):
        transition = str(current["lastTransitionTime"])
    condition = {
        "type": POD_SCHEDULED,
        "status": "False",
        "reason": reason,
        "message": message,
        "lastTransitionTime": transition,
    }
    return {"status": {"conditions": [condition]}}


class ConditionWriter:
    """Writes the newest wanted condition of each pod, one write per pod at a time."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self._wanted: dict[tuple[str, str], tuple[str, str, str]] = {}  # -> (uid, reason, message)
        self._tasks: dict[tuple[str, str], asyncio.Task[None]] = {}
        self.writes = 0

    def submit(self, namespace: str, name: str, *, uid: str, reason: str, message: str) -> None:
        key = (namespace, name)
        self._wanted[key] = (uid, reason, message)
        if key not in self._tasks:
            self._tasks[key] = asyncio.create_task(self._write(key), name=f"pod-condition-{namespace}/{name}")

    async def idle(self) -> None:
        """Wait until every submitted condition has been written (or given up on)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks.values()), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._tasks.values()):
            task.cancel()
        for task in list(self._tasks.values()):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _write(self, key: tuple[str, str]) -> None:
        namespace, name = key
        try:
            while key in self._wanted:
                uid, reason, message = self._wanted.pop(key)
                pod = self._client.get("", "pods", namespace, name)
                if pod is None or (pod.get("spec") or {}).get("nodeName"):
                    continue  # gone or bound meanwhile: nothing to say
                if uid and (pod.get("metadata") or {}).get("uid") != uid:
                    continue  # replaced by another pod of the same name
                patch = condition_patch(pod, reason=reason, message=message, now=datetime.now(UTC))
                if patch is None:
                    continue
                try:
                    await self._client.patch(
                        "", "pods", namespace, name, patch, patch_type="strategic", subresource="status"
                    )
                    self.writes += 1
                except StatusError as err:
                    log.warning(
                        "could not update the PodScheduled condition: %s", err, extra={"key": f"{namespace}/{name}"}
                    )
        finally:
            self._tasks.pop(key, None)
