"""The Kubernetes CEL function libraries a DRA selector may call.

Kubernetes builds the DRA selector environment on the apiserver's base CEL
environment (quantity, lists, regex, sets, strings, optionals) and adds the
DRA semver library and ``cel.bind``. This module declares those functions
twice from one table:

* for the *checker*, with Kubernetes' opaque types ``kubernetes.Quantity`` and
  ``kubernetes.Semver``, so type errors read as Kubernetes reports them;
* for the *runtime*, where the C++ CEL runtime cannot carry Python objects, a
  quantity or a semver travels as a tagged canonical string (`encode_quantity`,
  `encode_semver`). The canonical form makes CEL's ``==`` agree with
  Kubernetes' ``Equal`` (numeric for quantities, build metadata ignored for
  versions). The checker guarantees user code never sees these strings.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from services.kube import quantity as q
from services.kube.cel import semver as sv

QUANTITY_TAG = "\ue000q:"
SEMVER_TAG = "\ue000s:"
QUANTITY_TYPE = "kubernetes.Quantity"
SEMVER_TYPE = "kubernetes.Semver"
NO_SUCH_OVERLOAD = "no such overload"


class CelFunctionError(ValueError):
    """An error a library function returns to the CEL program."""


# ---------------------------------------------------------------------------
# Runtime encodings.


def encode_quantity(value: Fraction) -> str:
    return f"{QUANTITY_TAG}{value.numerator}/{value.denominator}"


@lru_cache(maxsize=8192)
def decode_quantity(text: str) -> Fraction:
    num, _, den = text[len(QUANTITY_TAG) :].partition("/")
    return Fraction(int(num), int(den))


def encode_semver(version: sv.Version) -> str:
    return SEMVER_TAG + version.canonical()


@lru_cache(maxsize=4096)
def decode_semver(text: str) -> sv.Version:
    return sv.parse(text[len(SEMVER_TAG) :])


def _quantity_arg(value: Any) -> Fraction:
    if isinstance(value, str) and value.startswith(QUANTITY_TAG):
        return decode_quantity(value)
    raise CelFunctionError(NO_SUCH_OVERLOAD)


def _semver_arg(value: Any) -> sv.Version:
    if isinstance(value, str) and value.startswith(SEMVER_TAG):
        return decode_semver(value)
    raise CelFunctionError(NO_SUCH_OVERLOAD)


# ---------------------------------------------------------------------------
# Quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go).


def _quantity(text: str) -> str:
    try:
        return encode_quantity(q.parse_quantity(text).value)
    except q.QuantityError as err:
        raise CelFunctionError(str(err)) from None


def _is_quantity(text: str) -> bool:
    return q.is_quantity(text)


def _sign(value: str) -> int:
    return q.sign(_quantity_arg(value))


def _is_integer(value: str) -> bool:
    return q.as_int64(_quantity_arg(value)) is not None


def _as_integer(value: str) -> int:
    result = q.as_int64(_quantity_arg(value))
    if result is None:
        raise CelFunctionError("cannot convert value to integer")
    return result


def _as_approximate_float(value: str) -> float:
    return float(_quantity_arg(value))


def _add(value: str, other: str | int) -> str:
    rhs = Fraction(other) if isinstance(other, int) else _quantity_arg(other)
    return encode_quantity(_quantity_arg(value) + rhs)


def _sub(value: str, other: str | int) -> str:
    rhs = Fraction(other) if isinstance(other, int) else _quantity_arg(other)
    return encode_quantity(_quantity_arg(value) - rhs)


# ---------------------------------------------------------------------------
# Comparisons shared by quantities and semvers (same names, both libraries).


def _compare(value: str, other: str) -> int:
    if isinstance(value, str) and value.startswith(QUANTITY_TAG):
        return q.compare(decode_quantity(value), _quantity_arg(other))
    return sv.compare(_semver_arg(value), _semver_arg(other))


def _is_greater_than(value: str, other: str) -> bool:
    return _compare(value, other) == 1


def _is_less_than(value: str, other: str) -> bool:
    return _compare(value, other) == -1


# ---------------------------------------------------------------------------
# Semver library (k8s.io/dynamic-resource-allocation/cel/semverlib.go).


def _semver(text: str) -> str:
    try:
        return encode_semver(sv.parse(text))
    except sv.SemverError as err:
        raise CelFunctionError(str(err)) from None


def _is_semver(text: str) -> bool:
    return sv.is_semver(text)


def _major(value: str) -> int:
    return _semver_arg(value).major


def _minor(value: str) -> int:
    return _semver_arg(value).minor


def _patch(value: str) -> int:
    return _semver_arg(value).patch


# ---------------------------------------------------------------------------
# Lists library (k8s.io/apiserver/pkg/cel/library/lists.go), without
# indexOf/lastIndexOf whose names the strings extension already owns here.


def _sort_key(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(QUANTITY_TAG):
        return decode_quantity(value)
    if isinstance(value, str) and value.startswith(SEMVER_TAG):
        return _SemverKey(decode_semver(value))
    return value


@dataclass(frozen=True, slots=True)
class _SemverKey:
    version: sv.Version

    def __lt__(self, other: _SemverKey) -> bool:
        return sv.compare(self.version, other.version) < 0


def _keys(values: list[Any]) -> list[Any]:
    keys = [_sort_key(v) for v in values]
    kinds = {type(k) for k in keys}
    if (bool in kinds and len(kinds) > 1) or len(kinds - {int, float}) > 1:
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    return keys


def _is_sorted(values: list[Any]) -> bool:
    keys = _keys(values)
    return all(not keys[i + 1] < keys[i] for i in range(len(keys) - 1))


def _sum(values: list[Any]) -> Any:
    if any(isinstance(v, bool | str | list | dict) for v in values):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    return sum(values) if values else 0


def _min(values: list[Any]) -> Any:
    if not values:
        raise CelFunctionError("min called on empty list")
    keys = _keys(values)
    return values[min(range(len(values)), key=keys.__getitem__)]


def _max(values: list[Any]) -> Any:
    if not values:
        raise CelFunctionError("max called on empty list")
    keys = _keys(values)
    return values[max(range(len(values)), key=keys.__getitem__)]


# ---------------------------------------------------------------------------
# Regex library (k8s.io/apiserver/pkg/cel/library/regex.go).


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise CelFunctionError(f"error parsing regexp: {err}") from None


def _find(text: str, pattern: str) -> str:
    match = _regex(pattern).search(text)
    return match.group(0) if match else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    found = [m.group(0) for m in _regex(pattern).finditer(text)]
    return found if limit < 0 else found[:limit]


# ---------------------------------------------------------------------------
# Sets extension (cel-go ext.Sets).


def _sets_contains(values: list[Any], sub: list[Any]) -> bool:
    return all(any(x == y for y in values) for x in sub)


def _sets_equivalent(a: list[Any], b: list[Any]) -> bool:
    return _sets_contains(a, b) and _sets_contains(b, a)


def _sets_intersects(a: list[Any], b: list[Any]) -> bool:
    return any(x == y for x in a for y in b)


# ---------------------------------------------------------------------------
# The table both environments are built from. Types are names resolved by
# `environment`: "quantity"/"semver" are opaque for the checker and strings at
# runtime; "list" is list(dyn); "list_string" is list(string).


@dataclass(frozen=True, slots=True)
class Overload:
    function: str
    overload_id: str
    params: tuple[str, ...]
    result: str
    member: bool
    impl: Callable[..., Any]


OVERLOADS: tuple[Overload, ...] = (
    Overload("quantity", "string_to_quantity", ("string",), "quantity", False, _quantity),
    Overload("isQuantity", "is_quantity_string", ("string",), "bool", False, _is_quantity),
    Overload("sign", "quantity_get_sign", ("quantity",), "int", True, _sign),
    Overload("isInteger", "quantity_is_integer", ("quantity",), "bool", True, _is_integer),
    Overload("asInteger", "quantity_get_int", ("quantity",), "int", True, _as_integer),
    Overload("asApproximateFloat", "quantity_get_float", ("quantity",), "double", True, _as_approximate_float),
    Overload("add", "quantity_add", ("quantity", "quantity"), "quantity", True, _add),
    Overload("add", "quantity_add_int", ("quantity", "int"), "quantity", True, _add),
    Overload("sub", "quantity_sub", ("quantity", "quantity"), "quantity", True, _sub),
    Overload("sub", "quantity_sub_int", ("quantity", "int"), "quantity", True, _sub),
    Overload("isLessThan", "quantity_less", ("quantity", "quantity"), "bool", True, _is_less_than),
    Overload("isLessThan", "semver_is_less_than", ("semver", "semver"), "bool", True, _is_less_than),
    Overload("isGreaterThan", "quantity_greater", ("quantity", "quantity"), "bool", True, _is_greater_than),
    Overload("isGreaterThan", "semver_is_greater_than", ("semver", "semver"), "bool", True, _is_greater_than),
    Overload("compareTo", "quantity_compare_to", ("quantity", "quantity"), "int", True, _compare),
    Overload("compareTo", "semver_compare_to", ("semver", "semver"), "int", True, _compare),
    Overload("semver", "string_to_semver", ("string",), "semver", False, _semver),
    Overload("isSemver", "is_semver_string", ("string",), "bool", False, _is_semver),
    Overload("major", "semver_major", ("semver",), "int", True, _major),
    Overload("minor", "semver_minor", ("semver",), "int", True, _minor),
    Overload("patch", "semver_patch", ("semver",), "int", True, _patch),
    Overload("isSorted", "list_is_sorted", ("list",), "bool", True, _is_sorted),
    Overload("sum", "list_sum", ("list",), "dyn", True, _sum),
    Overload("min", "list_min", ("list",), "dyn", True, _min),
    Overload("max", "list_max", ("list",), "dyn", True, _max),
    Overload("find", "string_find_n", ("string", "string"), "string", True, _find),
    Overload("findAll", "string_find_all", ("string", "string"), "list_string", True, _find_all),
    Overload("findAll", "string_find_all_n", ("string", "string", "int"), "list_string", True, _find_all),
    Overload("sets.contains", "list_sets_contains_list", ("list", "list"), "bool", False, _sets_contains),
    Overload("sets.equivalent", "list_sets_equivalent_list", ("list", "list"), "bool", False, _sets_equivalent),
    Overload("sets.intersects", "list_sets_intersects_list", ("list", "list"), "bool", False, _sets_intersects),
)
