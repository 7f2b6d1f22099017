"""Keep what a version cannot express when an object is updated through it.

Why this module exists: the storage form is a superset of every version, so
reading an object through an older version hides fields (the 1.31 classic DRA
fields through v1/v1beta2/v1beta1; firstAvailable, tolerations, counters,
taints, device status… through v1alpha3), and writing the object back through
that version would erase them. Kubernetes carries such fields in annotations
for some lossy conversions; draplane keeps the stored values instead
(docs/decisions/api-versions.md): on an update through ``version``, every
field the old stored object has and ``version`` cannot show is copied from the
old object into the new one, at the same place.

What a version "cannot show" is computed, not listed: the old object is
converted to ``version`` and back, and every key present in the old object
but missing from that round trip is one. Lists are matched element by element
by ``name`` when every element has one (requests, subrequests, devices,
counter sets), otherwise by position when both lists have the same length;
an element the client removed is not restored, and a field the version can
express is always the client's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["keep_unrepresentable", "restore"]

Converter = Callable[[dict[str, Any]], dict[str, Any]]


def keep_unrepresentable(
    new_hub: dict[str, Any],
    old_hub: dict[str, Any],
    *,
    to_version: Converter,
    from_version: Converter,
) -> dict[str, Any]:
    """``new_hub`` (written through a version) with what that version cannot express kept from ``old_hub``.

    ``to_version``/``from_version`` are the version's conversions from and to
    the storage form (`conversion.keep_unrepresentable` looks them up).
    """
    seen = from_version(to_version(old_hub))
    out = restore(new_hub, old_hub, seen)
    assert isinstance(out, dict)
    return out


def restore(new: Any, old: Any, seen: Any) -> Any:
    """``new`` plus every part of ``old`` that ``seen`` (old's round trip through a version) lost."""
    if isinstance(new, dict) and isinstance(old, dict) and isinstance(seen, dict):
        out = dict(new)
        for key, old_value in old.items():
            if key not in seen:
                if key not in new:
                    out[key] = old_value
            elif key in new:
                out[key] = restore(new[key], old_value, seen[key])
        return out
    if isinstance(new, list) and isinstance(old, list) and isinstance(seen, list):
        return _restore_list(new, old, seen)
    return new


def _name(item: Any) -> Any:
    return item.get("name") if isinstance(item, dict) else None


def _restore_list(new: list[Any], old: list[Any], seen: list[Any]) -> list[Any]:
    if len(old) != len(seen):
        return new
    if old and all(_name(o) is not None for o in old) and all(_name(n) is not None for n in new):
        by_name = {_name(o): (o, s) for o, s in zip(old, seen, strict=True)}
        out = []
        for item in new:
            pair = by_name.get(_name(item))
            out.append(item if pair is None else restore(item, pair[0], pair[1]))
        return out
    if len(new) == len(old):
        return [restore(n, o, s) for n, o, s in zip(new, old, seen, strict=True)]
    return new
