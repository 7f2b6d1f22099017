"""events.k8s.io/v1 Event ↔ core/v1 Event: two views of one stored object.

Why this module exists: Kubernetes stores both groups' Events under one key
(the events.k8s.io REST storage is core's), so an Event written through one
group is read through the other. draplane stores the core/v1 form; these two
pure functions are the renames of Kubernetes' conversions
(``pkg/apis/events/v1/conversion.go`` with ``pkg/apis/core/v1/conversion.go``):

    regarding ↔ involvedObject            note ↔ message
    reportingController ↔ reportingComponent
    deprecatedSource ↔ source             deprecatedCount ↔ count
    deprecatedFirstTimestamp ↔ firstTimestamp
    deprecatedLastTimestamp ↔ lastTimestamp

Every other field (metadata, eventTime, series, reason, type, action,
related, reportingInstance) has the same name and shape in both. The mapping
is total both ways, so an update through either group loses nothing.
Empty strings of core fields that Go writes without ``omitempty``
(``reportingComponent``, ``reportingInstance``) are dropped on the way to
events.k8s.io/v1, whose fields all carry it, as Go's encoder would.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CORE_TO_EVENTS_V1", "EVENTS_V1_API_VERSION", "core_to_events_v1", "events_v1_to_core"]

EVENTS_V1_API_VERSION = "events.k8s.io/v1"

# core/v1 field → events.k8s.io/v1 field, for the fields whose names differ.
CORE_TO_EVENTS_V1: dict[str, str] = {
    "involvedObject": "regarding",
    "message": "note",
    "reportingComponent": "reportingController",
    "source": "deprecatedSource",
    "firstTimestamp": "deprecatedFirstTimestamp",
    "lastTimestamp": "deprecatedLastTimestamp",
    "count": "deprecatedCount",
}
_EVENTS_V1_TO_CORE = {v: k for k, v in CORE_TO_EVENTS_V1.items()}
_OMITEMPTY_IN_V1 = frozenset({"reportingController", "reportingInstance"})


def core_to_events_v1(obj: dict[str, Any]) -> dict[str, Any]:
    """A core/v1 Event as events.k8s.io/v1 shows it."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = CORE_TO_EVENTS_V1.get(key, key)
        if name in _OMITEMPTY_IN_V1 and value == "":
            continue
        out[name] = value
    out["apiVersion"] = EVENTS_V1_API_VERSION
    return out


def events_v1_to_core(obj: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event in its stored core/v1 form."""
    out = {_EVENTS_V1_TO_CORE.get(key, key): value for key, value in obj.items()}
    out["apiVersion"] = "v1"
    return out
