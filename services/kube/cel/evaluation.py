"""Run compiled DRA selectors against devices, with Kubernetes' runtime errors.

A `DeviceView` is the CEL input for one device, built once and reused for
every selector evaluated against that device (the allocator evaluates class
and request selectors against the same devices many times). It mirrors
``CompilationResult.DeviceMatches`` in
``k8s.io/dynamic-resource-allocation/cel/compile.go``: attribute and capacity
names without a domain belong to the driver's domain, version attributes are
parsed as semver, and a broken attribute is an evaluation error.

Runtime errors are reported with cel-go's wording (``no such key: foo``,
``division by zero``, ...), which is what Kubernetes puts after
``CEL runtime error:``. Kubernetes stops a program at a cost of 1,000,000
(``operation cancelled: actual cost limit exceeded``); the C++ runtime's
equivalent guard is a budget of 10,000 comprehension iterations per
evaluation, reported with Kubernetes' message. Device selectors iterate over
at most 32 attributes, far below either.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cel_expr_python import cel

from services.kube import quantity as q
from services.kube.cel import library
from services.kube.cel import semver as sv
from services.kube.cel.compiler import CompiledSelector, strip_status
from services.kube.cel.environment import runtime_env
from services.kube.cel.typenames import cel_go_name


class CelRuntimeError(Exception):
    """A selector could not be evaluated; ``str()`` is Kubernetes' message."""


@dataclass(frozen=True, slots=True, eq=False)
class DeviceView:
    """The ``device`` variable for one device, ready for repeated evaluation."""

    driver: str
    activation: Any = None
    error: str | None = None


def _split_name(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _attribute_value(attr: Mapping[str, Any]) -> Any:
    if attr.get("int") is not None:
        return int(attr["int"])
    if attr.get("bool") is not None:
        return bool(attr["bool"])
    if attr.get("string") is not None:
        return str(attr["string"])
    if attr.get("version") is not None:
        try:
            return library.encode_semver(sv.parse(str(attr["version"])))
        except sv.SemverError as err:
            raise ValueError(f"parse semantic version: {err}") from None
    raise ValueError("unsupported attribute value")


def _capacity_value(value: Any) -> str:
    # v1alpha3 (1.31) stores a bare quantity; later versions wrap it in {value: ...}.
    if isinstance(value, Mapping):
        value = value.get("value")
    # The slice's quantity was decoded from JSON (Quantity.UnmarshalJSON), not given to ParseQuantity.
    return library.encode_quantity(q.parse_wire_quantity(value).value)


def device_view(
    *,
    driver: str,
    attributes: Mapping[str, Mapping[str, Any]] | None = None,
    capacity: Mapping[str, Any] | None = None,
) -> DeviceView:
    """Build the CEL input for a device from its wire-form attributes and capacity."""
    attrs: dict[str, dict[str, Any]] = {}
    for name, attr in (attributes or {}).items():
        try:
            value = _attribute_value(attr)
        except ValueError as err:
            return DeviceView(driver, error=f"attribute {name}: {err}")
        domain, ident = _split_name(name, driver)
        attrs.setdefault(domain, {})[ident] = value
    caps: dict[str, dict[str, str]] = {}
    for name, value in (capacity or {}).items():
        try:
            encoded = _capacity_value(value)
        except q.QuantityError as err:
            return DeviceView(driver, error=f"capacity {name}: {err}")
        domain, ident = _split_name(name, driver)
        caps.setdefault(domain, {})[ident] = encoded
    device = {"driver": driver, "attributes": attrs, "capacity": caps}
    return DeviceView(driver, activation=runtime_env().Activation({"device": device}))


_KEY_NOT_FOUND = re.compile(r'^Key not found in map\s*:\s*"?(.*?)"?$')
_INDEX_ERROR = re.compile(r"^Index error: index=(-?\d+) size=(\d+)$")
_NO_OVERLOAD = re.compile(r"^No matching overloads? found")


def runtime_message(raw: str) -> str:
    """Translate a C++ runtime error into cel-go's wording."""
    text = strip_status(raw)
    if m := _KEY_NOT_FOUND.match(text):
        return f"no such key: {m.group(1)}"
    if m := _INDEX_ERROR.match(text):
        return f"index '{m.group(1)}' out of range in list size '{m.group(2)}'"
    if _NO_OVERLOAD.match(text):
        return library.NO_SUCH_OVERLOAD
    if text == "divide by zero":
        return "division by zero"
    if text == "modulus by zero":
        return "modulus by zero"
    return text


_ERROR_TYPE = cel.Type.ERROR
COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"


def evaluate(compiled: CompiledSelector, device: DeviceView) -> bool | CelRuntimeError:
    """True/False, or the error Kubernetes would report for this device."""
    if compiled.error is not None:
        return CelRuntimeError(compiled.error)
    if device.error is not None:
        return CelRuntimeError(device.error)
    try:
        result = compiled.program.eval(device.activation)
    except RuntimeError as err:
        # The C++ runtime aborts a program after 10,000 comprehension
        # iterations: draplane's counterpart of Kubernetes' per-call cost limit.
        message = strip_status(str(err))
        return CelRuntimeError(COST_LIMIT_EXCEEDED if "budget exceeded" in message else message)
    value = result.value()
    if value is True or value is False:
        return bool(value)
    kind = result.type()
    if kind == _ERROR_TYPE:
        return CelRuntimeError(runtime_message(str(value)))
    name = cel_go_name(kind.name())
    return CelRuntimeError(
        f"CEL result of type {name} could not be converted to bool: type conversion error from '{name}' to 'bool'"
    )
