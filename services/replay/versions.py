"""`draplane replay --api-version`: log records shown in one API version of their group.

Why this module exists: the log holds each resource.k8s.io object in one
storage form (docs/decisions/api-versions.md), and a log recorded before that
form holds 1.31's v1alpha3 objects; a user reading the log wants the objects
as a client of one version would see them. This module picks the version and
converts through the conversion entry points
(`services.api.machinery.conversion`): a stored object to the hub form, then
to the version asked for. It converts nothing itself.

- Objects of other groups are shown as stored.
- A kind the version lacks (PodSchedulingContext in v1, DeviceTaintRule in
  v1alpha3) is shown as stored, with a one-line note once per kind.
- An unknown group/version is a one-line error listing the known ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from services.api.machinery.conversion import (
    CONVERSIONS,
    INTERNAL,
    ConversionError,
    from_internal,
    upgrade_stored,
)
from services.api.types import registry
from services.replay.output import ReplayedRecord
from topics.declarations import OBJECTS
from topics.envelope import MalformedRecord, split_key

__all__ = ["VersionView", "known_api_versions", "parse_api_version"]

# What the log held for resource.k8s.io before the hub form. Reading a stored object through this
# version's conversion to the hub is the identity on hub objects and upgrades a 1.31 one (it wraps a
# slice's bare capacity and changes nothing else; docs/decisions/api-versions.md, "Old logs"), so it
# reads a record without knowing which form wrote it.

# Kubernetes' version order within a group: GA, then beta, then alpha; higher numbers first.
_KUBE_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")
_STAGE = {None: 0, "beta": 1, "alpha": 2}


def _priority(version: str) -> tuple[int, int, int, str]:
    """kube's version priority as a sort key (v1, v1beta2, v1beta1, v1alpha3; other names last)."""
    m = _KUBE_VERSION.fullmatch(version)
    if m is None:
        return (3, 0, 0, version)
    return (_STAGE[m.group(2)], -int(m.group(1)), -int(m.group(3) or 0), version)


def _api_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


def known_api_versions() -> list[str]:
    """Every group/version that objects can be shown in: the served ones and those the conversion table has."""
    pairs = {(rt.group, v) for rt in registry.RESOURCES for v in registry.served_versions(rt.group)}
    # (a view's qualified version, events.k8s.io/v1 of core Events, is its own group's served version)
    pairs |= {(group, v) for (group, _kind, v, _to) in CONVERSIONS if v != INTERNAL and "/" not in v}
    ordered = sorted(pairs, key=lambda p: (p[0], _priority(p[1])))
    return [_api_version(g, v) for g, v in ordered]


def parse_api_version(text: str) -> tuple[str, str]:
    """``group/version`` (``v1`` for core) → (group, version); ValueError naming the known ones."""
    known = known_api_versions()
    if text not in known:
        raise ValueError(f"unknown API version {text!r}: known are {', '.join(known)}")
    group, _, version = text.rpartition("/")
    return group, version


def _log_group(group: str) -> str:
    """The API group of a log key's group segment (the core group is spelled ``core`` there)."""
    return registry.CORE if group == "core" else group


@dataclass
class VersionView:
    """Converts replayed records to one ``group/version``; `note` is called once per kind that version lacks."""

    group: str
    version: str
    note: Callable[[str], None]
    _noted: set[str] = field(default_factory=set)

    @classmethod
    def parse(cls, text: str, *, note: Callable[[str], None]) -> VersionView:
        group, version = parse_api_version(text)
        return cls(group, version, note)

    def convert(self, obj: dict[str, Any], *, group: str) -> dict[str, Any]:
        """One stored object (of API group ``group``) in the view's version, or as stored when it cannot be."""
        kind = obj.get("kind")
        if _log_group(group) != self.group or not isinstance(kind, str):
            return obj
        if self.group == registry.CORE or not any(
            g == self.group and k == kind and f == INTERNAL for (g, k, f, _t) in CONVERSIONS
        ):
            # A group without a hub form stores its one served version.
            return obj
        if (self.group, kind, INTERNAL, self.version) not in CONVERSIONS:
            self._note_missing(kind, obj)
            return obj
        try:
            hub = upgrade_stored(obj)  # the read path's one upgrade of a pre-hub record
            return from_internal(hub, group=self.group, kind=kind, version=self.version)
        except (ConversionError, ValueError, TypeError, KeyError, AttributeError) as exc:
            self.note(f"note: {kind} {_name(obj)} not converted ({exc}); shown as stored")
            return obj

    def record(self, record: ReplayedRecord) -> ReplayedRecord:
        """A replayed ``objects`` record with its object converted (tombstones and other topics unchanged)."""
        if record.topic != OBJECTS or not isinstance(record.object, dict) or record.key is None:
            return record
        try:
            group = split_key(record.key)[0]
        except MalformedRecord:
            return record
        converted = self.convert(record.object, group=group)
        return record if converted is record.object else replace(record, object=converted)

    def _note_missing(self, kind: str, obj: dict[str, Any]) -> None:
        if kind in self._noted:
            return
        self._noted.add(kind)
        stored = obj.get("apiVersion", "?")
        self.note(
            f"note: {_api_version(self.group, self.version)} has no {kind}; {kind} records are shown as stored "
            f"({stored})"
        )


def _name(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return "/".join(p for p in (meta.get("namespace"), meta.get("name")) if p) or "?"
