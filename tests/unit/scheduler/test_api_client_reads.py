"""The scheduler's GET after a conflict hands out a copy: the informer's object stays as the log has it.

Found by a chaos run on Kafka: the DRA plugin's PreBind retried a conflict by
getting the claim and adding the pod to ``reservedFor`` on what it got. That
was the informer's own object, so the scheduler's view then had the claim
reserved for the pod while the log did not; the next attempt skipped the
claim write as "already reserved" and bound the pod to an unallocated claim.
"""

from __future__ import annotations

from typing import Any

from services.runtime.client import Client
from services.runtime.informer import Informer
from services.scheduler.api_client import LogAPIClient
from topics.envelope import UserInfo

RESOURCE_CLAIMS = ("resource.k8s.io", "resourceclaims")


class EmptyLog:
    """Just enough of a bus for a read: the log has nothing beyond what the informer holds."""

    async def end_offset(self, topic: str) -> int:
        return 0


async def test_editing_what_get_returned_leaves_the_informer_untouched() -> None:
    informer = Informer(EmptyLog())  # type: ignore[arg-type]
    claim: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "chaos", "resourceVersion": "675"},
        "status": {},
    }
    informer.store(*RESOURCE_CLAIMS)._put(("chaos", "shared"), claim)
    client = LogAPIClient(Client(EmptyLog(), user=UserInfo("system:kube-scheduler"), informer=informer))  # type: ignore[arg-type]

    got = await client.get(RESOURCE_CLAIMS, "shared", namespace="chaos")
    got["status"] = {"reservedFor": [{"resource": "pods", "name": "s00028-b", "uid": "u"}]}
    got["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]

    stored = informer.store(*RESOURCE_CLAIMS).get("chaos", "shared")
    assert stored is not None
    assert stored["status"] == {}
    assert "finalizers" not in stored["metadata"]
