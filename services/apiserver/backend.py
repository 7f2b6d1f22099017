"""The seam between the HTTP layer and the log.

The REST handlers only speak to a `Backend`: reads come from the apiserver's
materialized view of `objects`, writes become `requests` for the committer and
return once the view has caught up with the reply's resourceVersion (the writer
reads its own writes). Keeping this seam narrow lets the HTTP layer be tested
on its own and keeps the committer the only writer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from services.api.types.registry import ResourceType
from topics.envelope import Request

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]

# A filter applied to objects of a list or watch (label and field selectors).
ObjectFilter = Callable[[dict[str, Any]], bool]


@dataclass(frozen=True, slots=True)
class ListResult:
    items: list[dict[str, Any]]
    resource_version: str  # the offset the list is consistent at
    continue_token: str | None = None
    remaining: int | None = None


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: WatchEventType
    object: dict[str, Any]


@dataclass(frozen=True, slots=True)
class WriteResult:
    code: int  # 200, 201 or 202
    object: dict[str, Any]  # the object (or a Status for some deletes)
    warnings: tuple[str, ...] = ()


class Backend(Protocol):
    async def get(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        """The object, or raise StatusError 404."""
        ...

    async def list(
        self,
        rt: ResourceType,
        namespace: str | None,
        *,
        match: ObjectFilter | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
    ) -> ListResult:
        """Objects of a type (in a namespace, or all when None), sorted by namespace/name."""
        ...

    def watch(
        self,
        rt: ResourceType,
        namespace: str | None,
        *,
        resource_version: str | None,
        match: ObjectFilter | None = None,
        bookmarks: bool = False,
        send_initial_events: bool = False,
    ) -> AsyncIterator[WatchEvent]:
        """Changes after ``resource_version`` (or from now when None / "0": initial ADDED events).

        Raises StatusError 410 when the version is older than the view keeps.
        """
        ...

    async def write(self, request: Request) -> WriteResult:
        """Send a request to the committer and wait for its reply; raise StatusError on failure."""
        ...
