"""What the namespace controller decides for a terminating namespace: pure functions over its contents.

Why this module exists: Kubernetes' namespace controller
(``pkg/controller/namespace/deletion``: namespaced_resources_deleter.go and
status_condition_utils.go) empties a deleted namespace in a fixed order and
reports progress in five ``NamespaceDeletion*`` / ``Namespace*Remaining``
conditions; the shell (`services.controllers.namespace`) only reads the
informer, sends the deletes and writes what is decided here:

- pods first: while any pod remains, nothing else is deleted (their claims
  must stay until the node agent has unprepared them);
- then every other namespaced object that is not already being deleted;
- what remains is counted per resource and per finalizer for the
  conditions; an object that remains without a finalizer is an error;
- when nothing remains, the ``kubernetes`` finalizer is removed from
  ``spec.finalizers`` (through ``namespaces/finalize``) and the apiserver
  deletes the namespace once no finalizer is left.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.api.types.registry import ResourceType
from services.kube import namespaces as ns_rules

Obj = dict[str, Any]

# v1.NamespaceConditionType -> the reason and message of its "all is well" (False) form.
_OK = {
    ns_rules.DISCOVERY_FAILURE: ("ResourcesDiscovered", "All resources successfully discovered"),
    ns_rules.GROUP_VERSION_PARSING_FAILURE: ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    ns_rules.CONTENT_FAILURE: ("ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
    ns_rules.CONTENT_REMAINING: ("ContentRemoved", "All content successfully removed"),
    ns_rules.FINALIZERS_REMAINING: ("ContentHasNoFinalizers", "All content-preserving finalizers finished"),
}


def namespaced_resources(resources: Iterable[ResourceType]) -> list[ResourceType]:
    """The resources whose objects a namespace holds, pods first (the deleter's order).

    Events are left out: they live on their own log (``events``), best-effort
    and expiring, as an etcd override for events would hold them.
    """
    chosen = [rt for rt in resources if rt.namespaced and (rt.group, rt.plural) != ("", "events")]
    return sorted(chosen, key=lambda rt: (rt.group, rt.plural) != ("", "pods"))


def needs_work(namespace: Mapping[str, Any] | None) -> bool:
    """A namespace the controller must empty: deleted and still carrying the ``kubernetes`` finalizer."""
    return (
        namespace is not None
        and ns_rules.is_deleted(namespace)
        and ns_rules.FINALIZER_KUBERNETES in ns_rules.spec_finalizers(namespace)
    )


def to_delete(objects: Iterable[Obj]) -> list[Obj]:
    """The objects a DELETE is still to be sent for (those not already being deleted)."""
    return [o for o in objects if not (o.get("metadata") or {}).get("deletionTimestamp")]


@dataclass
class Remaining:
    """What is left in the namespace after the deletes: counts per resource and per finalizer."""

    by_resource: dict[ResourceType, int] = field(default_factory=dict)
    by_finalizer: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.by_resource


def remaining(namespace: str, contents: Mapping[ResourceType, Sequence[Obj]]) -> Remaining:
    """Count what remains (deleteAllContentForGroupVersionResource after its list).

    Pods may remain while they terminate gracefully; any other object that
    remains without a finalizer is Kubernetes' "unexpected items still remain".
    """
    out = Remaining()
    for rt, objects in contents.items():
        if not objects:
            continue
        out.by_resource[rt] = len(objects)
        finalizers: dict[str, int] = {}
        for obj in objects:
            for finalizer in (obj.get("metadata") or {}).get("finalizers") or ():
                finalizers[str(finalizer)] = finalizers.get(str(finalizer), 0) + 1
        for finalizer, count in finalizers.items():
            out.by_finalizer[finalizer] = out.by_finalizer.get(finalizer, 0) + count
        if not finalizers and (rt.group, rt.plural) != ("", "pods"):
            out.errors.append(
                f"unexpected items still remain in namespace: {namespace} for gvr: "
                f"{rt.group}/{rt.preferred_version}, Resource={rt.plural}"
            )
    return out


def failure_conditions(*, remaining: Remaining | None, errors: Sequence[str], now: str) -> list[Obj]:
    """The conditions that report trouble (status True), as the condition updater builds them.

    ``remaining`` is None while pods are still being deleted: Kubernetes then
    reports only delete errors, not the content totals.
    """
    out: list[Obj] = []
    if remaining is not None and remaining.by_resource:
        parts = sorted(f"{rt.plural}.{rt.group} has {n} resource instances" for rt, n in remaining.by_resource.items())
        out.append(
            _condition(
                ns_rules.CONTENT_REMAINING,
                "True",
                "SomeResourcesRemain",
                f"Some resources are remaining: {', '.join(parts)}",
                now,
            )
        )
    if remaining is not None and remaining.by_finalizer:
        parts = sorted(f"{f} in {n} resource instances" for f, n in remaining.by_finalizer.items())
        out.append(
            _condition(
                ns_rules.FINALIZERS_REMAINING,
                "True",
                "SomeFinalizersRemain",
                f"Some content in the namespace has finalizers remaining: {', '.join(parts)}",
                now,
            )
        )
    if errors:
        message = f"Failed to delete all resource types, {len(errors)} remaining: {', '.join(sorted(errors))}"
        out.append(_condition(ns_rules.CONTENT_FAILURE, "True", "ContentDeletionFailed", message, now))
    return out


def updated_conditions(current: Sequence[Obj], failures: Sequence[Obj], *, now: str) -> list[Obj] | None:
    """``status.conditions`` with every condition type set (updateConditions); None when nothing changed.

    A type without a failure gets its "all is well" form. An existing
    condition keeps its lastTransitionTime unless its status flips.
    """
    result = [dict(c) for c in current]
    changed = False
    for type_ in ns_rules.CONDITION_TYPES:
        new = next((c for c in failures if c["type"] == type_), None)
        if new is None:
            reason, message = _OK[type_]
            new = _condition(type_, "False", reason, message, now)
        old = next((c for c in result if c.get("type") == type_), None)
        if old is None:
            result.append(new)
            changed = True
        elif (old.get("status"), old.get("reason"), old.get("message")) != (
            new["status"],
            new["reason"],
            new["message"],
        ):
            if old.get("status") != new["status"]:
                old["lastTransitionTime"] = now
            old.update(status=new["status"], reason=new["reason"], message=new["message"])
            changed = True
    return result if changed else None


def finalized_spec(namespace: Mapping[str, Any]) -> Obj:
    """``spec`` without the ``kubernetes`` finalizer (the others kept, sorted, as finalizeNamespace sends them)."""
    spec = dict(namespace.get("spec") or {})
    spec["finalizers"] = sorted({f for f in ns_rules.spec_finalizers(namespace) if f != ns_rules.FINALIZER_KUBERNETES})
    return spec


def _condition(type_: str, status: str, reason: str, message: str, now: str) -> Obj:
    return {"type": type_, "status": status, "lastTransitionTime": now, "reason": reason, "message": message}
