"""DefaultBinder: binds a pod by creating its ``pods/binding`` subresource through the log.

It is a ``ChainedBindPlugin``: the framework may send its binding chained
after PreBind's last writes (``services.scheduler.binding_chain``).
"""

from __future__ import annotations

from services.api.machinery.status import StatusError
from services.scheduler.client import PODS, APIClient, Write
from services.scheduler.framework import CycleState, Pod
from services.scheduler.plugins import names
from services.scheduler.plugins._objects import name, namespace, uid
from services.scheduler.status import Status, as_status


def binding_for(pod: Pod, node_name: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name(pod), "namespace": namespace(pod), "uid": uid(pod)},
        "target": {"kind": "Node", "name": node_name},
    }


class DefaultBinder:
    name = names.DEFAULT_BINDER

    def __init__(self, client: APIClient) -> None:
        self.client = client

    def binding_write(self, pod: Pod, node_name: str) -> Write:
        return Write("create", PODS, obj=binding_for(pod, node_name), namespace=namespace(pod), subresource="binding")

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            binding = binding_for(pod, node_name)
            await self.client.create(PODS, binding, namespace=namespace(pod), subresource="binding")
        except StatusError as err:
            return as_status(err)
        return None
