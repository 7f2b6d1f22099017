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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

AttributeValue = tuple[str, Any]
"""(kind, value) with kind one of int, bool, string, version."""

_KINDS = ("string", "int", "bool", "version")


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

    def applies_to(self, request_name: str) -> bool:
        return not self.request_names or request_name in self.request_names

    def add(self, request_name: str, attributes: Mapping[str, Mapping[str, Any]], driver: str) -> bool:
        if not self.applies_to(request_name):
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

    def remove(self, request_name: str) -> None:
        if self.applies_to(request_name):
            self.num_devices -= 1
