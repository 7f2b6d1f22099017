"""What the controllers need from the outside world, as protocols.

Why this module exists: the controllers write through `Writer` rather than a
concrete client so that tests can inject faults at each write (fail the claim
create, fail the pod-status write after the create, block between the two),
and so that another transport can be used without touching them. Writes that
depend on each other go as one chain (`Writer.write_chain`,
`services.runtime.request_chains`), built with `Writer.request`.
`services.runtime.client.Client` satisfies `Writer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from services.api.machinery.status import StatusError
from topics.envelope import Op, Request

Obj = dict[str, Any]


class Writer(Protocol):
    """The writes the controllers make; each raises `services.api.machinery.status.StatusError` on failure."""

    async def create(self, group: str, resource: str, obj: Obj, *, namespace: str = "", **options: Any) -> Obj: ...

    async def update(self, group: str, resource: str, obj: Obj, **options: Any) -> Obj: ...

    async def update_status(self, group: str, resource: str, obj: Obj, **options: Any) -> Obj: ...

    async def patch(
        self,
        group: str,
        resource: str,
        namespace: str,
        name: str,
        patch: Any,
        *,
        patch_type: str = "merge",
        subresource: str = "",
        **options: Any,
    ) -> Obj: ...

    async def delete(self, group: str, resource: str, namespace: str, name: str, **options: Any) -> Obj: ...

    def request(
        self,
        op: Op,
        group: str,
        resource: str,
        namespace: str,
        name: str,
        *,
        obj: Obj | None = None,
        patch: Any = None,
        patch_type: str | None = None,
        options: dict[str, Any] | None = None,
        after_version: bool = False,
    ) -> Request:
        """A write request for `write_chain` (nothing is sent)."""
        ...

    async def write_chain(self, requests: Sequence[Request]) -> list[Obj | StatusError]:
        """Send ``requests`` at once, each applied only if the one before it succeeded; their results, in order
        (a timeout is every request's answer: it never raises StatusError)."""
        ...


class EventRecorder(Protocol):
    """Kubernetes' ``record.EventRecorder``: a note about an object for its users.

    `services.runtime.events.EventRecorder` (core/v1 Events on the ``events``
    topic) satisfies it.
    """

    async def record(self, involved: Obj, type_: str, reason: str, message: str) -> Any: ...
