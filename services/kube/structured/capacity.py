"""Consumable capacity of shared devices (DRAConsumableCapacity, Kubernetes 1.36 beta).

A device with ``allowMultipleAllocations`` may be allocated to several
claims at once; each allocation consumes part of its ``capacity``. What one
request consumes is, per capacity of the device (``CmpRequestOverCapacity``
and ``calculateConsumedCapacity`` in ``structured/internal/incubating``):

* nothing requested: the policy's ``default``, else the whole capacity;
* requested, no policy: the request as is;
* a ``validRange``: below ``min`` rounds up to ``min``; with a ``step``, up to
  the next ``min + n*step`` (whole units, each rounded up, as Go's ``Value()``);
* ``validValues``: the first listed value at or above the request, else the request.

The amount must then satisfy the policy (at most ``max``, on a step, or one of
the valid values; the default always does), and together with what is already
allocated and what this allocation attempt adds it must not exceed the value.
A request for a capacity the device does not have never fits.
Amounts are exact `Fraction`\\ s; `Amount` keeps the wire text for results.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from services.kube import quantity as q
from services.kube.strconv import INT64_MAX


class CapacityError(ValueError):
    """A capacity request that cannot be computed; ``str()`` is Kubernetes' message."""


@dataclass(frozen=True, slots=True)
class Amount:
    """A consumed amount: exact value and its wire text."""

    value: Fraction
    text: str


def _amount(raw: Any) -> Amount:
    parsed = q.parse_wire_quantity(raw)
    return Amount(parsed.value, str(parsed))


def capacity_value(raw: Any) -> Any:
    """The quantity of a device capacity: ``{value: q}`` (1.33+, the hub) or a bare quantity (1.31)."""
    return raw.get("value") if isinstance(raw, Mapping) else raw


def _ceil(value: Fraction) -> int:
    """Go's ``Quantity.Value()``: whole units, rounded away from zero."""
    return q.value(value)


def _round_up_range(requested: Amount, valid_range: Mapping[str, Any]) -> Amount:
    minimum = _amount(valid_range["min"])
    if requested.value < minimum.value:
        return minimum
    step_raw = valid_range.get("step")
    if step_raw is None:
        return requested
    step = q.parse_wire_quantity(step_raw)
    step_int, min_int = _ceil(step.value), _ceil(minimum.value)
    added = _ceil(requested.value) - min_int
    n = added // step_int if added >= 0 else -((-added) // step_int)  # Go truncates toward zero
    if added % step_int != 0 and added > 0:
        n += 1
    value = Fraction(min_int + step_int * n)
    if value > INT64_MAX:
        raise CapacityError(
            "capacity request cannot be represented in the device's range arithmetic: "
            f"rounding request {requested.text} up to the next step passes MaxInt64"
        )
    return Amount(value, q.canonical(value, fmt=step.format))


def _consumed_one(requested: Amount | None, capacity: Mapping[str, Any]) -> Amount:
    policy = capacity.get("requestPolicy") if isinstance(capacity, Mapping) else None
    if requested is None:
        if policy and policy.get("default") is not None:
            return _amount(policy["default"])
        return _amount(capacity_value(capacity))
    if not policy:
        return requested
    valid_range = policy.get("validRange")
    if valid_range and valid_range.get("min") is not None:
        return _round_up_range(requested, valid_range)
    valid_values = policy.get("validValues")
    if valid_values is not None:
        for raw in valid_values:
            candidate = _amount(raw)
            if requested.value <= candidate.value:
                return candidate
    return requested


def _violates_policy(amount: Amount, policy: Mapping[str, Any] | None) -> bool:
    if not policy:
        return False
    default = policy.get("default")
    if default is not None and q.amount_value(default) == amount.value:
        return False
    valid_range = policy.get("validRange")
    if valid_range:
        maximum = valid_range.get("max")
        if maximum is not None and amount.value > q.amount_value(maximum):
            return True
        step = valid_range.get("step")
        if step is not None:
            minimum = valid_range.get("min")
            min_int = _ceil(q.amount_value(minimum)) if minimum is not None else 0
            return (_ceil(amount.value) - min_int) % _ceil(q.amount_value(step)) != 0
        return False
    valid_values = policy.get("validValues")
    if valid_values:
        return all(q.amount_value(v) != amount.value for v in valid_values)
    return False


def consumed_capacity(requests: Mapping[str, Any] | None, capacity: Mapping[str, Any]) -> dict[str, Amount] | None:
    """What one allocation consumes of every capacity of the device; None when it asks for one the device lacks.

    Raises `CapacityError` for a negative amount or one that cannot be rounded.
    """
    requests = requests or {}
    for name in requests:
        if name not in capacity:
            return None
    consumed: dict[str, Amount] = {}
    for name, cap in capacity.items():
        raw = requests.get(name)
        amount = _consumed_one(_amount(raw) if raw is not None else None, cap)
        if amount.value < 0:
            raise CapacityError(f'capacity "{name}": capacity value is negative')
        consumed[name] = amount
    return consumed


def fits(
    consumed: Mapping[str, Amount],
    capacity: Mapping[str, Any],
    *,
    allocated: Mapping[str, Fraction],
    allocating: Mapping[str, Fraction],
) -> bool:
    """Whether ``consumed`` keeps every policy and fits beside what is allocated and being allocated."""
    for name, cap in capacity.items():
        amount = consumed[name]
        policy = cap.get("requestPolicy") if isinstance(cap, Mapping) else None
        if _violates_policy(amount, policy):
            return False
        total = amount.value + allocated.get(name, 0) + allocating.get(name, 0)
        if total > q.amount_value(capacity_value(cap)):
            return False
    return True
