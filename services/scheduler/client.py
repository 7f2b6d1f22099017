"""The narrow API the scheduler writes through, and the read-side listers.

The scheduler never talks to the log directly: plugins that write (binding,
claim allocation and reservation, PodSchedulingContext) use an injected
``APIClient`` whose methods return the object as stored, or raise
``services.api.machinery.status.StatusError`` with the Kubernetes Status (409 Conflict,
404 NotFound …). Reads go through plain listers over the informers' stores.
The lead wires both onto ``services.runtime``; tests use an in-memory fake.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from services.api.machinery.status import StatusError

Obj = Mapping[str, Any]
ResourceRef = tuple[str, str]  # (group, plural)

PODS: ResourceRef = ("", "pods")
NODES: ResourceRef = ("", "nodes")
RESOURCE_CLAIMS: ResourceRef = ("resource.k8s.io", "resourceclaims")
POD_SCHEDULING_CONTEXTS: ResourceRef = ("resource.k8s.io", "podschedulingcontexts")
DEVICE_CLASSES: ResourceRef = ("resource.k8s.io", "deviceclasses")
RESOURCE_SLICES: ResourceRef = ("resource.k8s.io", "resourceslices")

MERGE_PATCH = "application/merge-patch+json"


class APIClient(Protocol):
    """Writes (and fresh reads after a conflict); every call may raise StatusError."""

    async def create(
        self, resource: ResourceRef, obj: Obj, *, namespace: str = "", subresource: str = ""
    ) -> dict[str, Any]: ...

    async def get(self, resource: ResourceRef, name: str, *, namespace: str = "") -> dict[str, Any]: ...

    async def update(self, resource: ResourceRef, obj: Obj) -> dict[str, Any]: ...

    async def update_status(self, resource: ResourceRef, obj: Obj) -> dict[str, Any]: ...

    async def patch(
        self,
        resource: ResourceRef,
        name: str,
        patch: Obj,
        *,
        namespace: str = "",
        patch_type: str = MERGE_PATCH,
        subresource: str = "",
    ) -> dict[str, Any]: ...

    async def delete(self, resource: ResourceRef, name: str, *, namespace: str = "") -> None: ...


class Lister(Protocol):
    """Read access to an informer store (objects must not be mutated)."""

    def get(self, name: str, namespace: str = "") -> Obj | None: ...

    def list(self) -> list[Obj]: ...


def is_conflict(err: BaseException) -> bool:
    return isinstance(err, StatusError) and err.code == 409 and err.reason == "Conflict"


def is_not_found(err: BaseException) -> bool:
    return isinstance(err, StatusError) and err.code == 404


def is_already_exists(err: BaseException) -> bool:
    return isinstance(err, StatusError) and err.code == 409 and err.reason == "AlreadyExists"
