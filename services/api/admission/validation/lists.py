"""Kubernetes' generic list checks for DRA types: size limits and uniqueness.

``pkg/apis/resource/validation`` validates every list the same way: each
entry first, then the length (reported as ``Too long: may not be longer
than N`` with the entry count, never the whole list), then duplicates keyed
by one field of the entry. Keeping that order makes the error lists match
Kubernetes' own test expectations.

Kubernetes 1.37 changed both helpers (``LIMITS_1_37.too_many``): a list over
its limit yields only ``Too many: N: must have at most M items`` (the entries
are not validated, a guard against oversized writes), and a duplicate is
reported at the entry itself (``path[i]``), not at its key field.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from services.api.machinery.field_errors import FieldError, duplicate, too_long_max_length, too_many
from services.kube.resource_limits import LIMITS_1_31, ResourceLimits

ItemValidator = Callable[[Any, str], list[FieldError]]


def validate_slice(
    entries: Sequence[Any],
    max_size: int,
    validate_item: ItemValidator,
    path: str,
    *,
    limits: ResourceLimits = LIMITS_1_31,
) -> list[FieldError]:
    """Each entry, then the size limit (a negative ``max_size`` disables it)."""
    if limits.too_many and 0 <= max_size < len(entries):
        return [too_many(path, len(entries), max_size)]
    errs: list[FieldError] = []
    for i, entry in enumerate(entries):
        errs.extend(validate_item(entry, f"{path}[{i}]"))
    if 0 <= max_size < len(entries):
        errs.append(too_long_max_length(path, len(entries), max_size))
    return errs


def validate_set(
    entries: Sequence[Any],
    max_size: int,
    validate_item: ItemValidator,
    path: str,
    *,
    key: Callable[[Any], Hashable],
    key_field: str = "",
    limits: ResourceLimits = LIMITS_1_31,
) -> list[FieldError]:
    """`validate_slice` plus a ``Duplicate value`` for each repeated key.

    The duplicate is reported at ``path[i].key_field`` (or ``path[i]`` when
    the entries are the keys themselves).
    """
    if limits.too_many:
        if 0 <= max_size < len(entries):
            return [too_many(path, len(entries), max_size)]
        key_field = ""
    errs = validate_slice(entries, max_size, validate_item, path, limits=limits)
    seen: set[Hashable] = set()
    for i, entry in enumerate(entries):
        k = key(entry)
        if k in seen:
            errs.append(duplicate(f"{path}[{i}].{key_field}" if key_field else f"{path}[{i}]", k))
        else:
            seen.add(k)
    return errs


def same(entry: Any) -> Hashable:
    """Key function for lists of strings: the entry is its own key."""
    return entry if isinstance(entry, str) else repr(entry)
