"""Which records a replay prints: start and end points and filters, parsed from the command line.

Pure: parsing times (ISO 8601 or relative such as ``10m``) and matching a
decoded record against ``--kind``, ``--namespace`` and ``--name``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from services.api.types import registry

_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d)$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_time(text: str, *, now: datetime | None = None) -> int:
    """Milliseconds since the epoch for an ISO time, or for a relative one meaning "that long ago"."""
    now = now or datetime.now(UTC)
    match = _RELATIVE.match(text.strip())
    if match:
        seconds = float(match.group(1)) * _UNITS[match.group(2)]
        return int((now - timedelta(seconds=seconds)).timestamp() * 1000)
    try:
        parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"invalid time {text!r}: use ISO 8601 (2026-11-29T09:00:00Z) or a duration (10m, 2h)"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1000)


def parse_point(text: str, *, now: datetime | None = None) -> tuple[str, int]:
    """``("offset", n)`` for a number, ``("time", ms)`` for a time."""
    if text.strip().isdigit():
        return "offset", int(text)
    return "time", parse_time(text, now=now)


def resolve_kind(kind: str) -> tuple[str, str]:
    """(group, plural) for a kind, plural, singular or short name, case-insensitively."""
    wanted = kind.lower()
    group = ""
    if "." in wanted:
        wanted, group = wanted.split(".", 1)
    for rt in registry.RESOURCES:
        names = {rt.kind.lower(), rt.plural, rt.singular, *rt.short_names}
        if wanted in names and (not group or group == rt.group):
            stored = registry.storage_of(rt)  # events.k8s.io Events are core Events
            return stored.group, stored.plural
    raise ValueError(f'the server doesn\'t have a resource type "{kind}"')


@dataclass(frozen=True, slots=True)
class Filter:
    kind: tuple[str, str] | None = None
    namespace: str | None = None
    name: str | None = None

    def matches(self, key_parts: tuple[str, str, str, str], obj: dict[str, Any] | None = None) -> bool:
        group, resource, namespace, name = key_parts
        if self.kind is not None and (group, resource) != self.kind:
            return False
        if self.namespace is not None and namespace != self.namespace:
            return False
        return self.name is None or name == self.name
