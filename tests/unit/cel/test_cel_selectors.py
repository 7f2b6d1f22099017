"""The DRA CEL environment, mirroring TestCompile of dynamic-resource-allocation/cel/compile_test.go.

Each case compiles a selector and evaluates it against one device: the
expected compile error, evaluation error or match.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from services.kube.cel import CelRuntimeError, compile, compile_check, device_view, evaluate

DRIVER = "dra.example.com"


@dataclass
class Case:
    expression: str
    driver: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    capacity: dict[str, Any] = field(default_factory=dict)
    compile_error: str = ""
    match_error: str = ""
    match: bool = False


_LIST = "[" + ", ".join(str(i) for i in range(200)) + "]"
_SHORT = "[" + ", ".join(str(i) for i in range(40)) + "]"

ALL_ATTRIBUTES = {
    "bool": {"bool": True},
    "int": {"int": 1},
    "string": {"string": "fish"},
    "version": {"version": "1.0.0"},
}

CASES: dict[str, Case] = {
    # --- the cases of compile_test.go -------------------------------------------
    "true": Case("true", match=True),
    "false": Case("false", match=False),
    "syntax-error": Case("?!", compile_error="Syntax error"),
    "type-error": Case("1", compile_error="must evaluate to bool or the unknown type, not int"),
    "runtime-error-lookup-identifier": Case(
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        match_error="no such key: noSuchAttr",
    ),
    "runtime-error-lookup-map": Case(
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        match_error="no such key: noSuchAttr",
    ),
    "domain-check-negative": Case('"no-such-domain" in device.attributes', match=False),
    "domain-check-positive": Case(
        '"dra.example.com" in device.attributes',
        attributes={"dra.example.com/something": {"bool": True}},
        match=True,
    ),
    "empty-driver-name": Case('device.driver == ""', match=True),
    "real-driver-name": Case(f'device.driver == "{DRIVER}"', driver=DRIVER, match=True),
    "driver-name-qualifier": Case(
        f'device.attributes["{DRIVER}"].name', driver=DRIVER, attributes={"name": {"bool": True}}, match=True
    ),
    "driver-name-qualifier-map-lookup": Case(
        f'device.attributes["{DRIVER}"]["name"]', driver=DRIVER, attributes={"name": {"bool": True}}, match=True
    ),
    "bind": Case(
        f'cel.bind(dra, device.attributes["{DRIVER}"], dra.name)',
        driver=DRIVER,
        attributes={"name": {"bool": True}},
        match=True,
    ),
    "qualified-attribute-name": Case(
        'device.attributes["other.example.com"].name',
        driver=DRIVER,
        attributes={"other.example.com/name": {"bool": True}},
        match=True,
    ),
    "bool": Case(f'device.attributes["{DRIVER}"].name', driver=DRIVER, attributes={"name": {"bool": True}}, match=True),
    "int": Case(f'device.attributes["{DRIVER}"].name > 0', driver=DRIVER, attributes={"name": {"int": 1}}, match=True),
    "string": Case(
        f'device.attributes["{DRIVER}"].name == "fish"',
        driver=DRIVER,
        attributes={"name": {"string": "fish"}},
        match=True,
    ),
    "version": Case(
        f'device.attributes["{DRIVER}"].name.isGreaterThan(semver("0.0.1"))',
        driver=DRIVER,
        attributes={"name": {"version": "1.0.0"}},
        match=True,
    ),
    "quantity": Case(
        f'device.capacity["{DRIVER}"].name.isGreaterThan(quantity("1Ki"))',
        driver=DRIVER,
        capacity={"name": "1Mi"},
        match=True,
    ),
    "check-positive": Case(
        f'"name" in device.capacity["{DRIVER}"] && device.capacity["{DRIVER}"].name.isGreaterThan(quantity("1Ki"))',
        driver=DRIVER,
        capacity={"name": "1Mi"},
        match=True,
    ),
    "check-negative": Case(
        f'!("name" in device.capacity["{DRIVER}"]) || device.capacity["{DRIVER}"].name.isGreaterThan(quantity("1Ki"))',
        match=True,
    ),
    "all": Case(
        f"""
device.capacity["{DRIVER}"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["{DRIVER}"].bool &&
device.attributes["{DRIVER}"].int > 0 &&
device.attributes["{DRIVER}"].string == "fish" &&
device.attributes["{DRIVER}"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["{DRIVER}"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["{DRIVER}"]["bool"] &&
device.attributes["{DRIVER}"]["int"] > 0 &&
device.attributes["{DRIVER}"]["string"] == "fish" &&
device.attributes["{DRIVER}"]["version"].isGreaterThan(semver("0.0.1"))
""",
        driver=DRIVER,
        attributes=ALL_ATTRIBUTES,
        capacity={"quantity": "1Mi"},
        match=True,
    ),
    "many": Case(
        f'device.attributes["{DRIVER}"].a && device.attributes["{DRIVER}"].b && device.attributes["{DRIVER}"].c',
        driver=DRIVER,
        attributes={"a": {"bool": True}, "b": {"bool": True}, "c": {"bool": True}},
        match=True,
    ),
    # --- more of the environment --------------------------------------------------
    "missing-domain-has-is-false": Case('has(device.attributes["x.example.com"].foo)', match=False),
    "missing-domain-size-is-zero": Case('size(device.attributes["x.example.com"]) == 0', match=True),
    "missing-domain-capacity": Case(
        'device.capacity["x.example.com"].foo == quantity("1")', match_error="no such key: foo"
    ),
    "has-on-attributes-map-is-true": Case("has(device.attributes.anything)", match=True),
    "present-domain-has": Case(
        f'has(device.attributes["{DRIVER}"].name)', driver=DRIVER, attributes={"name": {"bool": False}}, match=True
    ),
    "in-does-not-see-default": Case('"x.example.com" in device.attributes || size(device.attributes) > 0', match=False),
    "iterate-domains": Case(
        'device.attributes.exists(d, d == "other.example.com")',
        driver=DRIVER,
        attributes={"other.example.com/x": {"int": 1}, "y": {"int": 2}},
        match=True,
    ),
    "bind-alias-default": Case(
        'cel.bind(x, device.attributes["x.example.com"], !has(x.foo) && size(x) == 0)', match=True
    ),
    "optional-index-of-missing-domain": Case('device.attributes[?"x.example.com"].hasValue()', match=True),
    "computed-domain-key": Case(
        'device.attributes[device.driver].model == "a100"',
        driver="gpu.example.com",
        attributes={"model": {"string": "a100"}},
        match=True,
    ),
    "comprehension-shadows-device": Case(
        '[{"attributes": {}}].exists(device, size(device.attributes) == 0)', match=True
    ),
    "quantity-equality-is-numeric": Case(
        f'device.capacity["{DRIVER}"].memory == quantity("1024Mi")',
        driver=DRIVER,
        capacity={"memory": "1Gi"},
        match=True,
    ),
    "capacity-as-integer": Case(
        f'device.capacity["{DRIVER}"].memory.asInteger() == 80 * 1024 * 1024 * 1024',
        driver=DRIVER,
        capacity={"memory": "80Gi"},
        match=True,
    ),
    "capacity-wrapped-value": Case(
        f'device.capacity["{DRIVER}"].memory.isLessThan(quantity("2Gi"))',
        driver=DRIVER,
        capacity={"memory": {"value": "1Gi"}},
        match=True,
    ),
    "semver-helpers": Case(
        f'cel.bind(v, device.attributes["{DRIVER}"].v, '
        'v.major() == 1 && v.minor() == 2 && v.patch() == 3 && v.compareTo(semver("1.2.4")) == -1)',
        driver=DRIVER,
        attributes={"v": {"version": "1.2.3"}},
        match=True,
    ),
    "semver-equality-ignores-build": Case(
        f'device.attributes["{DRIVER}"].v == semver("1.2.3+other")',
        driver=DRIVER,
        attributes={"v": {"version": "1.2.3+build.1"}},
        match=True,
    ),
    "invalid-version-attribute": Case(
        "true",
        driver=DRIVER,
        attributes={"v": {"version": "01.0.0"}},
        match_error='attribute v: parse semantic version: Major number must not contain leading zeroes "01"',
    ),
    "unsupported-attribute": Case(
        "true", driver=DRIVER, attributes={"v": {}}, match_error="attribute v: unsupported attribute value"
    ),
    "strings-extension": Case(
        f'device.attributes["{DRIVER}"].model.lowerAscii().startsWith("a") && '
        f'device.attributes["{DRIVER}"].model.split("-")[1] == "80g"',
        driver=DRIVER,
        attributes={"model": {"string": "A100-80g"}},
        match=True,
    ),
    "regex-matches": Case(
        f'device.attributes["{DRIVER}"].model.matches("^a1[0-9]+$")',
        driver=DRIVER,
        attributes={"model": {"string": "a100"}},
        match=True,
    ),
    "regex-find": Case('"abc123".find("[0-9]+") == "123" && "a1b2".findAll("[0-9]") == ["1", "2"]', match=True),
    "lists-library": Case("[1, 3, 2].max() == 3 && [1, 2].isSorted() && [1, 2, 3].sum() == 6", match=True),
    "sets-extension": Case("sets.contains([1, 2, 3], [2]) && sets.intersects([1], [1, 4])", match=True),
    "division-by-zero": Case("1 / 0 == 1", match_error="division by zero"),
    "cost-limit": Case(
        f"{_LIST}.all(x, {_LIST}.all(y, {_LIST}.all(z, x + y + z >= 0)))",
        match_error="operation cancelled: actual cost limit exceeded",
    ),
    "iteration-budget": Case(
        f"{_LIST}.all(x, {_LIST}.all(y, x + y >= 0))",
        match_error="operation cancelled: actual cost limit exceeded",
    ),
    "below-iteration-budget": Case(f"{_LIST}.all(x, {_SHORT}.all(y, x + y >= 0))", match=True),
    "dynamic-non-bool-result": Case(
        f'device.attributes["{DRIVER}"].n',
        driver=DRIVER,
        attributes={"n": {"int": 1}},
        match_error="CEL result of type int could not be converted to bool",
    ),
    "attribute-type-mismatch": Case(
        f'device.attributes["{DRIVER}"].s > 1',
        driver=DRIVER,
        attributes={"s": {"string": "x"}},
        match_error="no such overload",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_compile_and_match(name: str) -> None:
    case = CASES[name]
    compiled = compile(case.expression)
    if case.compile_error:
        assert compiled.error is not None and case.compile_error in compiled.error
        return
    assert compiled.error is None, compiled.error
    got = evaluate(compiled, device_view(driver=case.driver, attributes=case.attributes, capacity=case.capacity))
    if case.match_error:
        assert isinstance(got, CelRuntimeError), got
        assert case.match_error in str(got)
        return
    assert got is case.match


def test_compile_is_cached() -> None:
    assert compile("device.driver == 'x'") is compile("device.driver == 'x'")


def test_one_view_serves_many_selectors() -> None:
    view = device_view(driver=DRIVER, attributes={"model": {"string": "a100"}}, capacity={"mem": "80Gi"})
    selectors = [
        f'device.attributes["{DRIVER}"].model == "a100"',
        f'device.capacity["{DRIVER}"].mem.isGreaterThan(quantity("40Gi"))',
        f'device.attributes["{DRIVER}"].model == "h100"',
    ]
    assert [evaluate(compile(s), view) for s in selectors] == [True, True, False]


def test_compile_check_passes_valid_selectors() -> None:
    assert compile_check(f'device.driver == "{DRIVER}"') is None
    assert compile_check('device.attributes["gpu.example.com"].model') is None  # the unknown type
