"""Resources draplane serves but never holds: ``services``, for ``kubectl cluster-info``.

``kubectl cluster-info`` lists the Services labelled
``kubernetes.io/cluster-service=true`` in ``kube-system`` before it prints the
control plane's address, and stops with ``the server doesn't have a resource
type "services"`` when discovery lacks them. draplane runs no Service
networking, so it serves the type read-only (get, list, watch) and always
empty: lists answer no items at the current resourceVersion, a get is the
usual 404, a watch waits for changes that never come, and every write is 405
MethodNotAllowed. The types are not in `services.api.types.registry`: the
committer, the log's keys and the garbage collector never meet them.
"""

from __future__ import annotations

from services.api.types.registry import CORE, ResourceType

SERVICES = ResourceType(CORE, "v1", "Service", "services", "service", True, ("svc",), (), (), "ServiceList")

RESOURCES: tuple[ResourceType, ...] = (SERVICES,)
VERBS = ["get", "list", "watch"]

_BY_GROUP_RESOURCE = {(r.group, r.plural): r for r in RESOURCES}


def by_resource(group: str, plural: str) -> ResourceType | None:
    return _BY_GROUP_RESOURCE.get((group, plural))


def holds_nothing(rt: ResourceType) -> bool:
    return (rt.group, rt.plural) in _BY_GROUP_RESOURCE
