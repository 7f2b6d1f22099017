"""The admission chain: what runs on every write before the committer commits it.

Admission is where authorization (including node restriction), defaulting,
feature-gate field dropping and validation plug in. Each plugin sees the same
`Attributes` Kubernetes admission sees — the operation (CREATE, UPDATE,
DELETE), subresource, user, old and new object — plus a read-only `View` of
the committed state at the committer's position. A plugin may change
``attrs.new`` in place (mutating admission) and rejects a write by raising a
`StatusError`. Plugins are pure: no I/O, no awaits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from services.api.types.registry import ResourceType
from topics.envelope import UserInfo

Operation = Literal["CREATE", "UPDATE", "DELETE"]


class View(Protocol):
    """Read-only committed state (including earlier writes of the same batch)."""

    def get(self, group: str, resource: str, namespace: str, name: str) -> dict[str, Any] | None: ...

    def list(self, group: str, resource: str, namespace: str | None = None) -> Iterable[dict[str, Any]]: ...


@dataclass
class Attributes:
    operation: Operation
    resource: ResourceType
    namespace: str
    name: str
    user: UserInfo
    subresource: str = ""
    old: dict[str, Any] | None = None
    new: dict[str, Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    dry_run: bool = False
    warnings: list[str] = field(default_factory=list)
    version: str = ""  # the API version the client wrote with ("" or the storage version: as stored)


class AdmissionPlugin(Protocol):
    name: str

    def admit(self, attrs: Attributes, view: View) -> None:
        """Mutate ``attrs.new`` and/or raise StatusError."""
        ...


@dataclass
class AdmissionChain:
    """Plugins in order; the committer calls `admit` once per write."""

    plugins: Sequence[AdmissionPlugin] = ()

    def admit(self, attrs: Attributes, view: View) -> None:
        for plugin in self.plugins:
            plugin.admit(attrs, view)
