"""Conversion between the API versions clients speak and the storage version the log holds.

Why this module exists: internal objects are version-independent — the log
stores each resource in its storage version (core ``v1``, resource.k8s.io's
hub form) — while clients may speak any served version.
The REST edge converts a decoded body to the storage version before it is
written, and a stored object to the requested version before it is returned.

The core group serves only its storage version, so its conversion is the
identity (plus the ``apiVersion`` stamp). Kubernetes converts through an
internal hub type; here the storage version is the hub, so every version needs
exactly two functions per kind, to and from storage.

Conversion functions are pure: they take the object in one version and return
it in the other (they may reuse unchanged sub-objects of their input).

resource.k8s.io is stored in its hub form (`INTERNAL`: 1.37's v1beta1
layout plus 1.31's classic fields, decision in docs/decisions/api-versions.md),
stamped ``resource.k8s.io/v1beta1`` on the record; its registry rows name
`INTERNAL` as the storage version, so `to_storage`/`from_storage` convert every
served version (v1, v1beta2, v1beta1, v1alpha3) to and from it.
`keep_unrepresentable` keeps stored fields a version cannot express on an
update through it, and `upgrade_stored` reads a record a pre-hub log holds
(stamped v1alpha3) as a hub object.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from services.api.machinery.conversions import unrepresentable
from services.api.machinery.conversions.events_v1 import EVENTS_V1_API_VERSION, core_to_events_v1, events_v1_to_core
from services.api.machinery.conversions.table import INTERNAL, RESOURCE_CONVERSIONS
from services.api.types import registry
from services.api.types.registry import RESOURCE_GROUP, V1ALPHA3

__all__ = [
    "CONVERSIONS",
    "INTERNAL",
    "ConversionError",
    "Converter",
    "convert",
    "from_internal",
    "from_storage",
    "keep_unrepresentable",
    "storage_version",
    "to_internal",
    "to_storage",
    "upgrade_stored",
]

Converter = Callable[[dict[str, Any]], dict[str, Any]]

# (group, kind, from_version, to_version) → function. One of the two versions
# is always the hub: the group's storage version, or `INTERNAL`.
# A view's version is qualified (``events.k8s.io/v1``) and its rows carry the storage row's group
# (registry.qualified_version): the events.k8s.io/v1 view of core Events.
CONVERSIONS: Mapping[tuple[str, str, str, str], Converter] = MappingProxyType(
    {
        **RESOURCE_CONVERSIONS,
        ("", "Event", "v1", EVENTS_V1_API_VERSION): core_to_events_v1,
        ("", "Event", EVENTS_V1_API_VERSION, "v1"): events_v1_to_core,
    }
)


class ConversionError(ValueError):
    """No conversion exists between the two versions of a kind."""


def storage_version(group: str, kind: str) -> str:
    """The version a kind is stored in (its registry row's version)."""
    rt = registry.by_kind(group, kind)
    if rt is None:
        raise ConversionError(f"no resource of kind {kind!r} in group {group!r}")
    return rt.version


def _api_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


def convert(
    obj: dict[str, Any],
    *,
    group: str,
    kind: str,
    from_version: str,
    to_version: str,
    hub: str | None = None,
) -> dict[str, Any]:
    """``obj`` (a ``kind`` in ``group/from_version``) as ``group/to_version``.

    Same version: the object itself with ``apiVersion`` set. Otherwise through
    ``hub`` (by default the storage version), using the functions in
    `CONVERSIONS`. An object converted to `INTERNAL` keeps the ``apiVersion``
    it had: the hub form is never on the wire.
    """
    if from_version == to_version:
        return _stamp(obj, group, to_version)
    if hub is None:
        hub = storage_version(group, kind)
    current = obj
    for step_from, step_to in ((from_version, hub), (hub, to_version)):
        if step_from == step_to:
            continue
        fn = CONVERSIONS.get((group, kind, step_from, step_to))
        if fn is None:
            raise ConversionError(
                f"converting {kind} from {_api_version(group, step_from)} to {_api_version(group, step_to)}: "
                "unknown conversion"
            )
        current = fn(current)
    return _stamp(current, group, to_version)


def to_storage(obj: dict[str, Any], *, group: str, kind: str, version: str) -> dict[str, Any]:
    """A decoded ``group/version`` object in its storage version (what the log holds)."""
    return convert(obj, group=group, kind=kind, from_version=version, to_version=storage_version(group, kind))


def from_storage(obj: dict[str, Any], *, group: str, kind: str, version: str) -> dict[str, Any]:
    """A stored object in the version a client asked for."""
    return convert(obj, group=group, kind=kind, from_version=storage_version(group, kind), to_version=version)


def to_internal(obj: dict[str, Any], *, group: str, kind: str, version: str) -> dict[str, Any]:
    """A decoded ``group/version`` object in the group's hub form (`INTERNAL`)."""
    return convert(obj, group=group, kind=kind, from_version=version, to_version=INTERNAL, hub=INTERNAL)


def from_internal(obj: dict[str, Any], *, group: str, kind: str, version: str) -> dict[str, Any]:
    """A hub-form object in ``group/version``."""
    return convert(obj, group=group, kind=kind, from_version=INTERNAL, to_version=version, hub=INTERNAL)


def keep_unrepresentable(
    new_hub: dict[str, Any], old_hub: dict[str, Any], *, group: str, kind: str, version: str
) -> dict[str, Any]:
    """An update written through ``version`` (``new_hub``, already in hub form) with what ``version``
    cannot express kept from the stored object ``old_hub`` (`conversions.unrepresentable`)."""
    if version == INTERNAL or group != RESOURCE_GROUP:
        return new_hub  # only resource.k8s.io has versions that cannot express every stored field
    return unrepresentable.keep_unrepresentable(
        new_hub,
        old_hub,
        to_version=lambda o: from_internal(o, group=group, kind=kind, version=version),
        from_version=lambda o: to_internal(o, group=group, kind=kind, version=version),
    )


def _stamp(obj: dict[str, Any], group: str, version: str) -> dict[str, Any]:
    if version == INTERNAL:
        return obj
    api_version = _api_version(group, version)
    if obj.get("apiVersion") != api_version:
        obj = {**obj, "apiVersion": api_version}
    return obj


_PRE_HUB_API_VERSION = f"{RESOURCE_GROUP}/{V1ALPHA3}"


def upgrade_stored(obj: dict[str, Any]) -> dict[str, Any]:
    """A stored record's object in today's storage form.

    A log recorded before the hub form holds resource.k8s.io objects as 1.31's
    v1alpha3 (stamped so): they are read through the idempotent v1alpha3 → hub
    function and stamped as stored records are now. Anything else (every record
    written since, and PodSchedulingContext, stored as 1.31's) is returned as it
    is, after one string comparison.
    """
    if obj.get("apiVersion") != _PRE_HUB_API_VERSION:
        return obj
    kind = obj.get("kind")
    rt = registry.by_kind(RESOURCE_GROUP, kind) if isinstance(kind, str) else None
    if rt is None or rt.stored_as == V1ALPHA3:
        return obj
    fn = CONVERSIONS.get((RESOURCE_GROUP, rt.kind, V1ALPHA3, INTERNAL))
    if fn is None:
        return obj
    return {**fn(obj), "apiVersion": rt.api_version}
