"""Kubernetes' static cost estimate of DRA selectors, number for number.

Every expected number below was printed by Kubernetes 1.37.2 itself: a small
Go program (run outside the repo, GOFLAGS=-mod=mod, k8s.io/dynamic-resource-allocation
v0.37.2 with cel-go v0.29.2) that reads a JSON list of expressions and prints
``MaxCost`` of each:

    envType := environment.NewExpressions
    c := dracel.GetCompiler(dracel.Features{EnableConsumableCapacity: true})
    r := c.CompileCELExpression(expr, dracel.Options{EnvType: &envType})
    fmt.Println(r.MaxCost)

That is the number ``validateCELExpression`` compares with
``CELSelectorExpressionMaxCost`` (1,000,000). Expressions that draplane's
1.31 CEL environment does not compile (``device.allowMultipleAllocations``,
the lists library's ``indexOf``) are left out.
"""

from __future__ import annotations

import pytest

from services.kube.cel import estimate_cost
from services.kube.cel.cost import UNBOUNDED
from services.kube.resource_limits import CEL_SELECTOR_EXPRESSION_MAX_COST

KUBERNETES_COSTS: list[tuple[str, int]] = [
    ("true", 0),
    ("1 == 1", 1),
    ('device.driver == "gpu.example.com"', 4),
    ('device.attributes["gpu.example.com"].model', 4),
    ('device.attributes["gpu.example.com"].model == "a100"', 5),
    ('device.attributes["gpu.example.com"].model == device.attributes["gpu.example.com"].other', 15),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("10Gi")) >= 0', 7),
    ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("10Gi"))', 6),
    ('device.attributes["gpu.example.com"].version.isGreaterThan(semver("1.0.0"))', 6),
    ('device.attributes["gpu.example.com"].exists(k, true)', 132),
    ('device.attributes["gpu.example.com"].all(k, k == "x")', 164),
    ("device.attributes.exists(d, true)", 131),
    ("device.attributes.exists(d, device.attributes[d].exists(k, true))", 4_387),
    ("device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, true)))", 104_643),
    (
        "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, device.attributes.all(d, true))))",
        3_348_675,
    ),
    (
        "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, device.attributes.all(d, a == b))))",
        12_785_859,
    ),
    ('"a" + "b" == "ab"', 2),
    ('device.driver.startsWith("gpu")', 3),
    ('device.driver.matches("^gpu")', 9),
    ('device.driver.contains("gpu")', 9),
    ('device.attributes["gpu.example.com"].model.matches("^a")', 11),
    ("[1, 2, 3].all(x, x > 0)", 26),
    ("[1, 2, 3].size() == 3", 12),
    ("size(device.driver) > 3", 4),
    ("cel.bind(x, 1, x + 1 == 2)", 13),
    ('has(device.attributes["gpu.example.com"].model)', 3),
    ('"gpu.example.com" in device.attributes', 3),
    ('device.attributes["gpu.example.com"].model in ["a", "b"]', 16),
    ('!(device.driver == "x") && device.driver != "y" || false', 7),
    ('device.driver == "x" ? true : false', 3),
    ('device.attributes["gpu.example.com"].model.lowerAscii() == "a"', 12),
    ('device.attributes["gpu.example.com"].model.split(",").size() > 0', 19),
    ('device.attributes["gpu.example.com"].model.size() > 0', 6),
    ('{"a": 1}["a"] == 1', 32),
    ('device.attributes["gpu.example.com"].model + "x" == "ax"', 12),
    ('device.attributes["gpu.example.com"].count > 1', 5),
    ('device.attributes["gpu.example.com"].count * 2 > 1', 6),
    ("device.attributes.map(d, d).size() > 0", 431),
    ('device.attributes.filter(d, d == "x").size() > 0', 495),
    ('device.attributes.exists_one(d, d == "x")', 132),
    ('device.capacity.all(d, device.capacity[d].all(n, device.capacity[d][n].isGreaterThan(quantity("0"))))', 11_523),
    ('["a", "bb"].exists(x, x == device.driver)', 27),
    ('device.attributes["gpu.example.com"].model.split(",").exists(p, p == "x")', 402),
    ('device.attributes["gpu.example.com"].model.split(",").all(p, device.attributes.all(q, p == q))', 24_978),
    ('cel.bind(a, device.attributes["gpu.example.com"], a.model == "x" && a.count > 1)', 19),
    ('cel.bind(d, device.driver, d.startsWith("a") || d.endsWith("b"))', 16),
    ('device.attributes["gpu.example.com"].?model.orValue("") == "x"', 6),
    ('device.attributes[?"gpu.example.com"].hasValue()', 4),
    ("device.attributes.all(a, device.attributes[a].all(b, device.attributes[a][b] == device.driver))", 18_691),
    (
        "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, device.attributes.all(d, device.attributes.all(e, true)))))",
        107_157_699,
    ),
    ('device.attributes["gpu.example.com"].model.replace("a", "b") == "x"', 18),
    ('device.attributes["gpu.example.com"].model.substring(1) == "x"', 12),
    ('device.attributes["gpu.example.com"].model.trim() == "x"', 12),
    ('device.attributes["gpu.example.com"].model.upperAscii().startsWith("A")', 12),
    ('device.attributes["gpu.example.com"].model.indexOf("a") > 0', 12),
    ('device.attributes["gpu.example.com"].model.charAt(0) == "a"', 6),
    ('["a", "b"].join(",") == device.driver', 1_844_674_407_370_955_283),
    ('device.attributes["gpu.example.com"].model < "b"', 5),
    ('string(device.attributes["gpu.example.com"].count) == "1"', 12),
    ('int(device.attributes["gpu.example.com"].count) == 1', 6),
    ('device.attributes["gpu.example.com"].version.major() == 1', 6),
    ('device.capacity["gpu.example.com"].memory == quantity("1Gi")', 6),
    ('semver("1.2.3") == device.attributes["gpu.example.com"].version', 12),
    ('device.attributes["gpu.example.com"].v.compareTo(semver("1.0.0")) > 0', 7),
    ('device.capacity["gpu.example.com"].memory.asApproximateFloat() > 1.0', 6),
    ('device.capacity["gpu.example.com"].memory.add(quantity("1")).isLessThan(quantity("2"))', 8),
    ('isQuantity(device.attributes["gpu.example.com"].model)', 11),
    ("device.attributes.size() > 1", 4),
    ('size(device.attributes["gpu.example.com"]) > 0', 5),
    ('device.attributes.exists(d, d.endsWith(".com"))', 195),
    ('device.attributes.exists(d, d.matches("^[a-z]+\\\\.example\\\\.com$"))', 1_507),
    (
        'device.attributes.exists(d, device.attributes[d].exists(n, n.contains("x") && device.attributes[d][n] == "y"))',
        16_675,
    ),
    ('device.driver + device.driver == "ab"', 18),
    ('{"a": device.driver}.exists(k, k == "a")', 39),
    ('[device.driver, "x"].exists(k, k == "a")', 25),
    (
        'device.attributes["gpu.example.com"].model.lowerAscii().split("-").exists(p, p.matches("[0-9]+"))',
        18_446_744_073_709_551_615,
    ),
    (
        "device.attributes.all(a, device.attributes[a].all(b, device.attributes.all(c, device.attributes[c].all(d, true))))",
        3_414_275,
    ),
    ('dyn(device.driver) == "a"', 4),
    ("has(device.attributes.foo)", 2),
    ('device.attributes.foo.bar == "x"', 5),
    ("[1, 2].sum() > 0", 13),
    ('device.attributes["x"].model.lastIndexOf("a") > 0', 12),
    ('string(1) == "1"', 2),
    ('[device.driver].join("-") == "x"', 1_844_674_407_370_955_277),
]


@pytest.mark.parametrize(("expression", "cost"), KUBERNETES_COSTS, ids=[e for e, _ in KUBERNETES_COSTS])
def test_estimate_matches_kubernetes(expression: str, cost: int) -> None:
    assert estimate_cost(expression) == cost


def test_limit_falls_between_three_and_four_nested_iterations() -> None:
    three = "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, true)))"
    four = (
        "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, device.attributes.all(d, true))))"
    )
    assert (estimate_cost(three) or 0) <= CEL_SELECTOR_EXPRESSION_MAX_COST < (estimate_cost(four) or 0)


def test_iterating_something_unbounded_is_too_complex() -> None:
    expression = 'device.attributes["a"].model.lowerAscii().split("-").exists(p, p.matches("[0-9]+"))'
    assert estimate_cost(expression) == UNBOUNDED


def test_an_expression_that_does_not_compile_has_no_estimate() -> None:
    assert estimate_cost("device.nope") is None
