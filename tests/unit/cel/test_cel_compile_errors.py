"""compile_check: the detail Kubernetes reports for ``...selectors[j].cel.expression``."""

from __future__ import annotations

import pytest

from services.kube.cel import compile_check

EXACT: dict[str, str] = {
    "1": "must evaluate to bool or the unknown type, not int",
    '"x"': "must evaluate to bool or the unknown type, not string",
    "device.driver": "must evaluate to bool or the unknown type, not string",
    'device.attributes["x"]': "must evaluate to bool or the unknown type, not map(string, dyn)",
    'device.capacity["x"].y': "must evaluate to bool or the unknown type, not kubernetes.Quantity",
    'semver("1.0.0")': "must evaluate to bool or the unknown type, not kubernetes.Semver",
    "[1]": "must evaluate to bool or the unknown type, not list(int)",
    "1.5": "must evaluate to bool or the unknown type, not double",
    "null": "must evaluate to bool or the unknown type, not null_type",
    'duration("1s")': "must evaluate to bool or the unknown type, not google.protobuf.Duration",
    "noSuchVar": "compilation failed: ERROR: <input>:1:1: undeclared reference to 'noSuchVar' (in container '')\n"
    " | noSuchVar\n"
    " | ^",
    "device.foo": "compilation failed: ERROR: <input>:1:7: undefined field 'foo'\n | device.foo\n | ......^",
    "device.driver == 1": "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' "
    "applied to '(string, int)'\n | device.driver == 1\n | ..............^",
    'quantity("1").isGreaterThan(semver("1.0.0"))': "compilation failed: ERROR: <input>:1:28: found no matching "
    "overload for 'isGreaterThan' applied to 'kubernetes.Quantity.(kubernetes.Semver)'\n"
    ' | quantity("1").isGreaterThan(semver("1.0.0"))\n'
    " | ...........................^",
}


@pytest.mark.parametrize("expression", list(EXACT))
def test_exact_messages(expression: str) -> None:
    assert compile_check(expression) == EXACT[expression]


@pytest.mark.parametrize(
    ("expression", "fragment"),
    [
        ("?!", "compilation failed: ERROR: <input>:1:1: Syntax error: "),
        ("", "compilation failed: ERROR: <input>:1:1: Syntax error: mismatched input '<EOF>'"),
        ("device.driver ==", "Syntax error"),
        ("quantity(1) == quantity(1)", "found no matching overload for 'quantity' applied to '(int)'"),
        ('device.capacity["a"].m.add("1")', "applied to 'kubernetes.Quantity.(string)'"),
        ("size(1) > 0", "found no matching overload for 'size' applied to '(int)'"),
        ("foo(1)", "undeclared reference to 'foo'"),
    ],
)
def test_error_fragments(expression: str, fragment: str) -> None:
    detail = compile_check(expression)
    assert detail is not None and fragment in detail


@pytest.mark.parametrize(
    "expression",
    [
        'device.driver == "gpu.example.com"',
        'device.attributes["gpu.example.com"].model == "a100"',
        'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
        'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.0.0"))',
        'cel.bind(g, device.attributes["gpu.example.com"], g.model == "a100" && g.cores > 8)',
        'isQuantity("1Gi") && isSemver("1.0.0")',
        'quantity("1Gi").add(1).sub(quantity("1")).sign() == 1',
        'quantity("1.5").isInteger() || quantity("2").asApproximateFloat() > 1.0',
        'device.attributes["a"].x.startsWith("y")',
        '"gpu.example.com" in device.attributes',
        "[1, 2].all(x, x > 0)",
        'device.attributes[?"a"].orValue({}).size() == 0',
    ],
)
def test_valid_selectors(expression: str) -> None:
    assert compile_check(expression) is None
