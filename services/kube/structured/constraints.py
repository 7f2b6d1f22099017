"""Claim constraints across the devices allocated for a claim.

``spec.devices.constraints[].matchAttribute`` requires every device picked
for the listed requests (all requests when the list is empty) to carry the
same value of one attribute (``matchAttributeConstraint`` in
``k8s.io/dynamic-resource-allocation/structured/allocator.go``). The name is
fully qualified (``gpu.example.com/model``); a device of driver
``gpu.example.com`` may also publish it unqualified (``model``).

Constraints are monotonic, which lets the search prune early: once a device
violates one, adding more devices cannot fix it. ``add``/``remove`` pairs keep
the state exact while the allocator backtracks.

Since 1.33 a constraint may name a request of a prioritized list by its own
name (every subrequest) or as ``<request>/<subrequest>``: a request goes by
one name, a subrequest by both (`RequestNames`). 1.36's
``distinctAttribute`` (DRAConsumableCapacity) is the opposite of
``matchAttribute``: no two affected devices share a value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

AttributeValue = tuple[str, Any]
"""(kind, value) with kind one of int, bool, string, version."""

_KINDS = ("string", "int", "bool", "version")

RequestNames = tuple[str, ...]
"""The names a constraint may use for a request: ``(request,)`` or ``(request, request/subrequest)``."""


def attribute_value(attr: Mapping[str, Any]) -> AttributeValue | None:
    for kind in _KINDS:
        value = attr.get(kind)
        if value is not None:
            return kind, value
    return None


def lookup_attribute(attributes: Mapping[str, Mapping[str, Any]], driver: str, name: str) -> AttributeValue | None:
    """The attribute ``name`` (fully qualified) of a device of ``driver``."""
    attr = attributes.get(name)
    if attr is not None:
        return attribute_value(attr)
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    attr = attributes.get(ident)
    return attribute_value(attr) if attr is not None else None


class MatchAttributeConstraint:
    """All affected devices share one value of ``attribute_name``."""

    __slots__ = ("attribute_name", "num_devices", "request_names", "value")

    def __init__(self, attribute_name: str, request_names: frozenset[str]) -> None:
        self.attribute_name = attribute_name
        self.request_names = request_names
        self.value: AttributeValue | None = None
        self.num_devices = 0

    def applies_to(self, names: RequestNames) -> bool:
        if not self.request_names:
            return True
        return any(name in self.request_names for name in names)

    def add(self, names: RequestNames, attributes: Mapping[str, Mapping[str, Any]], driver: str) -> bool:
        if not self.applies_to(names):
            return True
        value = lookup_attribute(attributes, driver, self.attribute_name)
        if value is None:
            return False
        if self.num_devices == 0:
            self.value = value
            self.num_devices = 1
            return True
        if value != self.value:
            return False
        self.num_devices += 1
        return True

    def remove(self, names: RequestNames) -> None:
        if self.applies_to(names):
            self.num_devices -= 1


class DistinctAttributeConstraint:
    """No two affected devices share a value of ``attribute_name`` (every device must have it)."""

    __slots__ = ("attribute_name", "request_names", "values")

    def __init__(self, attribute_name: str, request_names: frozenset[str]) -> None:
        self.attribute_name = attribute_name
        self.request_names = request_names
        self.values: list[AttributeValue] = []

    def applies_to(self, names: RequestNames) -> bool:
        if not self.request_names:
            return True
        return any(name in self.request_names for name in names)

    def add(self, names: RequestNames, attributes: Mapping[str, Mapping[str, Any]], driver: str) -> bool:
        if not self.applies_to(names):
            return True
        value = lookup_attribute(attributes, driver, self.attribute_name)
        if value is None or value in self.values:
            return False
        self.values.append(value)
        return True

    def remove(self, names: RequestNames) -> None:
        if self.applies_to(names):
            self.values.pop()


Constraint = MatchAttributeConstraint | DistinctAttributeConstraint
