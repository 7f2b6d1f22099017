"""What the apiserver answers for a committed write: the object, or the committer's Success Status.

kube-apiserver answers a DELETE that removed a kind other than pods,
namespaces and nodes, and a pods/binding, with a Success Status (oracle
del2-delete-options-body-over-query); the committer's reply carries that
Status and the object (which the backend waits to see applied).
"""

from __future__ import annotations

from typing import Any

from services.api.machinery.status import success_status
from services.apiserver.log_backend import LogBackend
from topics.envelope import Reply, Request, UserInfo


class FakeClient:
    requester_id = "test"

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.visible: list[dict[str, Any]] = []

    async def submit(self, request: Request) -> Reply:
        return self.reply

    async def wait_visible(self, obj: dict[str, Any]) -> None:
        self.visible.append(obj)


class FakeInformer:
    def add_listener(self, *args: Any, **kwargs: Any) -> None:
        pass


def backend(reply: Reply) -> tuple[LogBackend, FakeClient]:
    client = FakeClient(reply)
    return LogBackend(FakeInformer(), client), client  # type: ignore[arg-type]


REQUEST = Request(
    id="r1", op="delete", group="coordination.k8s.io", resource="leases", namespace="ns", name="l",  # type: ignore[arg-type]
    user=UserInfo("admin", ()), reply_to="", version="v1",
)
LEASE = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l", "namespace": "ns"}}


async def test_a_delete_answered_with_a_status_returns_the_status_and_waits_for_the_object() -> None:
    status = success_status({"name": "l", "group": "coordination.k8s.io", "kind": "leases", "uid": "u"})
    b, client = backend(Reply("r1", 200, object=LEASE, status=status))
    result = await b.write(REQUEST)
    assert result.object == status
    assert client.visible == [LEASE]


async def test_a_write_answered_with_the_object_returns_it() -> None:
    b, client = backend(Reply("r1", 200, object=LEASE))
    result = await b.write(REQUEST)
    assert result.object == LEASE and client.visible == [LEASE]
