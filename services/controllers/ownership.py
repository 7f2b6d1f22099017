"""Owners and dependents: what the garbage collector must do about one object.

Why this module exists: garbage collection by ownerReferences is a handful of
rules (Kubernetes' ``pkg/controller/garbagecollector``, semantics only) whose
mistakes delete live objects or leak dead ones, so the rules are pure and
table-tested here and the collector (`garbage_collector`) only executes them:

- an owner reference is **solid** (the owner exists with that uid and is not
  deleting its dependents in the foreground), **dangling** (no object of that
  kind and name, or one with another uid), **waiting** (the owner exists and is
  being deleted with the ``foregroundDeletion`` finalizer) or **unresolved**
  (a kind draplane does not serve, or a namespaced owner of a cluster-scoped
  object: such a reference can never be verified, so it is never collected);
- an object with at least one solid owner stays, but loses its references to
  dangling and waiting owners; one whose owners are all dangling or waiting is
  deleted — in the foreground when a waiting owner needs its dependents gone
  and it has dependents itself, in the background otherwise;
- an owner being deleted with ``orphan`` first removes its reference from every
  dependent, then its finalizer;
- an owner being deleted with ``foregroundDeletion`` keeps its finalizer while
  a dependent still blocks it (``blockOwnerDeletion: true``) and has its
  dependents deleted; then it drops the finalizer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from services.api.types import registry
from services.api.types.registry import ResourceType

Obj = Mapping[str, Any]

FOREGROUND_FINALIZER = "foregroundDeletion"
ORPHAN_FINALIZER = "orphan"
BACKGROUND = "Background"
FOREGROUND = "Foreground"

OwnerLookup = Callable[[ResourceType, str, str], Obj | None]
"""(resource type, namespace, name) -> the object, or None when there is none."""


class OwnerState(Enum):
    SOLID = "solid"
    DANGLING = "dangling"
    WAITING = "waiting"  # the owner waits for its dependents to be deleted (foreground)
    UNRESOLVED = "unresolved"


@dataclass(frozen=True, slots=True)
class OwnerCheck:
    ref: Mapping[str, Any]
    state: OwnerState
    owner: Obj | None = None


def _meta(obj: Obj) -> Mapping[str, Any]:
    meta: Mapping[str, Any] = obj.get("metadata") or {}
    return meta


def uid_of(obj: Obj) -> str:
    return str(_meta(obj).get("uid", ""))


def owner_references(obj: Obj) -> list[Mapping[str, Any]]:
    return list(_meta(obj).get("ownerReferences") or ())


def is_being_deleted(obj: Obj) -> bool:
    return bool(_meta(obj).get("deletionTimestamp"))


def has_finalizer(obj: Obj, finalizer: str) -> bool:
    return finalizer in (_meta(obj).get("finalizers") or ())


def is_deleting_dependents(obj: Obj) -> bool:
    """Being deleted in the foreground: the object waits for its blocking dependents."""
    return is_being_deleted(obj) and has_finalizer(obj, FOREGROUND_FINALIZER)


def is_orphaning(obj: Obj) -> bool:
    """Being deleted with the orphan policy: its dependents must be released first."""
    return is_being_deleted(obj) and has_finalizer(obj, ORPHAN_FINALIZER)


def refers_to(dependent: Obj, owner_uid: str) -> bool:
    return any(ref.get("uid") == owner_uid for ref in owner_references(dependent))


def blocks(dependent: Obj, owner_uid: str) -> bool:
    """Whether ``dependent`` blocks the foreground deletion of the owner with ``owner_uid``."""
    return any(ref.get("uid") == owner_uid and ref.get("blockOwnerDeletion") for ref in owner_references(dependent))


def owner_type(ref: Mapping[str, Any]) -> ResourceType | None:
    return registry.by_api_version_kind(str(ref.get("apiVersion", "")), str(ref.get("kind", "")))


def check_owner(ref: Mapping[str, Any], *, dependent_namespace: str, lookup: OwnerLookup) -> OwnerCheck:
    """Classify one owner reference of an object in ``dependent_namespace`` ("" when cluster-scoped)."""
    rt = owner_type(ref)
    if rt is None:
        return OwnerCheck(ref, OwnerState.UNRESOLVED)
    if rt.namespaced and not dependent_namespace:
        return OwnerCheck(ref, OwnerState.UNRESOLVED)  # a cluster-scoped object cannot have a namespaced owner
    owner = lookup(rt, dependent_namespace if rt.namespaced else "", str(ref.get("name", "")))
    if owner is None or uid_of(owner) != ref.get("uid"):
        return OwnerCheck(ref, OwnerState.DANGLING, owner)
    if is_deleting_dependents(owner):
        return OwnerCheck(ref, OwnerState.WAITING, owner)
    return OwnerCheck(ref, OwnerState.SOLID, owner)


def check_owners(obj: Obj, lookup: OwnerLookup) -> list[OwnerCheck]:
    namespace = str(_meta(obj).get("namespace", "") or "")
    return [check_owner(ref, dependent_namespace=namespace, lookup=lookup) for ref in owner_references(obj)]


# -- actions -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Delete:
    """Delete the object (uid precondition) with this propagation policy."""

    policy: str


@dataclass(frozen=True, slots=True)
class TrimOwnerReferences:
    """Remove the references to these owner uids from the object."""

    uids: frozenset[str]


@dataclass(frozen=True, slots=True)
class UnblockOwnerReferences:
    """Set ``blockOwnerDeletion: false`` on the object's references (breaks foreground cycles)."""


@dataclass(frozen=True, slots=True)
class OrphanDependents:
    """Remove the references to the object from each of these dependents."""

    dependents: tuple[Obj, ...]


@dataclass(frozen=True, slots=True)
class RemoveFinalizer:
    finalizer: str


@dataclass(frozen=True, slots=True)
class Enqueue:
    """Look at these objects (dependents to be deleted) next."""

    objects: tuple[Obj, ...] = field(default_factory=tuple)


Action = Delete | TrimOwnerReferences | UnblockOwnerReferences | OrphanDependents | RemoveFinalizer | Enqueue


def plan(item: Obj, *, owners: Sequence[OwnerCheck], dependents: Sequence[Obj]) -> list[Action]:
    """What to do about ``item`` now, in order; ``dependents`` are the objects that reference its uid."""
    uid = uid_of(item)
    if is_being_deleted(item):
        if has_finalizer(item, ORPHAN_FINALIZER):
            orphans = tuple(d for d in dependents if refers_to(d, uid))
            return [OrphanDependents(orphans), RemoveFinalizer(ORPHAN_FINALIZER)]
        if has_finalizer(item, FOREGROUND_FINALIZER):
            if not any(blocks(d, uid) for d in dependents):
                return [RemoveFinalizer(FOREGROUND_FINALIZER)]
            pending = tuple(d for d in dependents if not is_being_deleted(d))
            return [Enqueue(pending)] if pending else []
        return []  # other finalizers hold it; nothing for the collector
    if not owners:
        return []
    by_state: dict[OwnerState, list[OwnerCheck]] = {state: [] for state in OwnerState}
    for check in owners:
        by_state[check.state].append(check)
    solid, dangling, waiting = by_state[OwnerState.SOLID], by_state[OwnerState.DANGLING], by_state[OwnerState.WAITING]
    if solid:
        if dangling or waiting:
            # Keep the object, but stop blocking owners that wait for it and
            # drop references to owners that are gone.
            return [TrimOwnerReferences(frozenset(str(c.ref.get("uid", "")) for c in [*dangling, *waiting]))]
        return []
    if by_state[OwnerState.UNRESOLVED]:
        return []  # an owner that cannot be verified may exist: never collect on a guess
    if waiting and dependents:
        actions: list[Action] = []
        if any(is_deleting_dependents(d) for d in dependents):
            actions.append(UnblockOwnerReferences())  # a dependent waits for us while we would wait for it
        actions.append(Delete(FOREGROUND))
        return actions
    return [Delete(BACKGROUND)]
