"""The narrow API the scheduler writes through, and the read-side listers.

The scheduler never talks to the log directly: plugins that write (binding,
claim allocation and reservation, PodSchedulingContext) use an injected
``APIClient`` whose methods return the object as stored, or raise
``services.api.machinery.status.StatusError`` with the Kubernetes Status (409 Conflict,
404 NotFound …). Reads go through plain listers over the informers' stores.
The lead wires both onto ``services.runtime``; tests use an in-memory fake.

``write_chain`` sends writes that depend on each other at once (issue 21):
each is applied only if the one before it succeeded, so they cost one trip
through the log instead of one each (``services.runtime.request_chains``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

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

Verb = Literal["create", "update", "update_status", "patch", "delete"]


@dataclass(frozen=True, slots=True)
class Write:
    """One write of a chain: what the ``APIClient`` method named by ``verb`` would send.

    ``obj`` is the body of create, update and update_status (their name and
    namespace come from it; a create's ``namespace`` may say it instead, as a
    binding's does), ``patch`` a patch's. ``after_version``: the write's
    resourceVersion precondition is "the object is as the write before it in
    the chain left it" (that write's version, not known when the chain is
    sent); ``obj`` then carries no resourceVersion.
    """

    verb: Verb
    resource: ResourceRef
    obj: Obj | None = None
    name: str = ""
    namespace: str = ""
    subresource: str = ""
    patch: Obj | None = None
    patch_type: str = MERGE_PATCH
    after_version: bool = False

    @property
    def object_name(self) -> str:
        return self.name or str((self.obj or {}).get("metadata", {}).get("name", ""))

    @property
    def object_namespace(self) -> str:
        return self.namespace or str((self.obj or {}).get("metadata", {}).get("namespace", ""))


WriteResult = dict[str, Any] | StatusError
"""A chained write's answer: the object as stored (as the single-write methods return it), or its refusal."""


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

    async def write_chain(self, writes: Sequence[Write]) -> list[WriteResult]:
        """Send the writes at once, each applied only if the one before it succeeded; their answers, in order.

        Each write is decided as it would be alone. Once one is refused, every
        later one is refused 409 Conflict ("not applied: the request it was
        sent after (…) was not applied") without being applied. A chained
        write may also be refused 409 when the committer does not remember the
        write before it (it restarted): the caller goes on as after any
        conflict. A StatusError that ends the whole call (the committer did not
        answer in time) is the answer of every write: as for a lone write that
        timed out, any of them may have been applied. Never raises StatusError.
        """
        ...


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
