"""``services.kube.quantity`` against Go's ``resource.Quantity`` (apimachinery v0.31.3).

Mirrors ``k8s.io/apimachinery/pkg/api/resource/quantity_test.go`` (TestQuantityParse,
TestQuantityParseEmit, the invalid list, TestJSONWhitespace). Every row of
``quantity_go_cases.json`` was settled by running Go: a small program read each
input, called ``resource.ParseQuantity`` and printed the error or ``String()``,
``AsDec()``, ``Format``, ``MilliValue()`` and ``Value()``, and unmarshalled the
input as a JSON string into a ``Quantity`` (``UnmarshalJSON``). Rows marked
``"from": "quantity_test.go"`` are the inputs of the upstream tables; the rest
are edge cases and seeded random strings. MilliValue/Value are kept only for
non-negative values that fit int64 (Go overflows there and rounds negatives
towards +inf; draplane rounds away from zero and stays exact).
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from services.kube import quantity as q

CASES: list[dict[str, Any]] = json.loads((Path(__file__).parent / "quantity_go_cases.json").read_text())
# Go accepts decimal exponents up to int32 and builds numbers that large; draplane refuses beyond MAX_EXPONENT.
_BEYOND_MAX_EXPONENT = {"1e1001"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: repr(c["in"]))
def test_parse_quantity_as_go(case: dict[str, Any]) -> None:
    if case["in"] in _BEYOND_MAX_EXPONENT:  # the documented difference: refused instead of built
        with pytest.raises(q.QuantityError, match=q.NUMERIC):
            q.parse_quantity(case["in"])
        return
    if "err" in case:
        with pytest.raises(q.QuantityError) as err:
            q.parse_quantity(case["in"])
        assert str(err.value) == case["err"]
        return
    parsed = q.parse_quantity(case["in"])
    assert parsed.value == Fraction(Decimal(case["dec"]))
    assert str(parsed) == case["str"]
    assert parsed.format == case["format"]
    if "milli" in case:
        assert parsed.milli_value == case["milli"]
        assert parsed.int_value == case["units"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: repr(c["in"]))
def test_wire_quantity_as_go_unmarshal_json(case: dict[str, Any]) -> None:
    if case["in"] in _BEYOND_MAX_EXPONENT:  # the documented difference: refused instead of built
        assert q.quantity_error(case["in"]) == q.NUMERIC
        return
    if "wire_err" in case:
        assert q.quantity_error(case["in"]) is not None
        with pytest.raises(q.QuantityError):
            q.parse_wire_quantity(case["in"])
        return
    assert str(q.parse_wire_quantity(case["in"])) == case["wire_str"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # TestJSONWhitespace: spaces around the text (in or outside the JSON string) are trimmed.
        (" 1", "1"),
        ("1 ", "1"),
        (1, "1"),
        (10, "10"),
        (-1, "-1"),
        (" -1", "-1"),
        # Settled with Go: TrimSpace runs on the raw JSON text, so non-ASCII spaces go, escaped ones stay.
        ("\u00a01Gi\u3000", "1Gi"),
        (0.5, "500m"),
        (1e3, "1k"),
    ],
)
def test_wire_quantity_trims_like_unmarshal_json(raw: object, expected: str) -> None:
    assert str(q.parse_wire_quantity(raw)) == expected


@pytest.mark.parametrize("raw", ["\t1", "\n1", "1\r", "\x1c1", "\x1f1Gi", True, None, [], float("nan")])
def test_wire_quantity_rejects_what_go_rejects(raw: object) -> None:
    # "\x1c".."\x1f" are whitespace to str.strip but not to Go's unicode.IsSpace (the " 1Gi" drift);
    # a tab or newline reaches UnmarshalJSON still escaped ("\\t1") and is not trimmed.
    with pytest.raises(q.QuantityError):
        q.parse_wire_quantity(raw)


def test_parse_quantity_takes_no_whitespace() -> None:
    # quantity_test.go: "trailing whitespace is forbidden" (CEL's quantity() calls ParseQuantity).
    for text in (" 1", "1 ", " 1Gi"):
        assert not q.is_quantity(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # The "1.5n" drift: ParseQuantity rounds sub-nano precision up (away from zero) to a nano unit.
        ("1.5n", Fraction(2, 10**9)),
        ("-1.5n", Fraction(-2, 10**9)),
        ("0.1n", Fraction(1, 10**9)),
        ("1.0000000001", Fraction(1000000001, 10**9)),
        ("1e-2147483648", Fraction(1, 10**9)),  # far below nano, without building 10**2147483648
        ("16Ei", Fraction(2**63 - 1)),  # binary SI is capped at MaxInt64
        ("1.5Gi", Fraction(3 * 2**29)),
        ("007", Fraction(7)),
    ],
)
def test_exact_values(text: str, value: Fraction) -> None:
    assert q.parse_quantity(text).value == value


@pytest.mark.parametrize(
    ("amount", "millis", "units"),
    [
        ("1.5n", 1, 1),
        ("100m", 100, 1),
        ("1Gi", 2**30 * 1000, 2**30),
        (" 1Gi", 2**30 * 1000, 2**30),
        (2, 2000, 2),
        (0.25, 250, 1),
        (Fraction(3, 2000), 2, 1),
    ],
)
def test_milli_value_and_value_of_amounts(amount: q.Amount, millis: int, units: int) -> None:
    assert q.milli_value(amount) == millis
    assert q.value(amount) == units


def test_amounts_of_equal_numbers_of_other_types_are_cached_apart() -> None:
    assert q.amount_value(0.1) == Fraction(1, 10)
    assert q.amount_value(Fraction(0.1)) == Fraction(0.1)


def test_beyond_max_exponent_is_refused() -> None:
    with pytest.raises(q.QuantityError, match=q.NUMERIC):
        q.parse_quantity(f"1e{q.MAX_EXPONENT + 1}")


def test_compare_sign_and_int64() -> None:
    one, half = q.parse_quantity("1").value, q.parse_quantity("500m").value
    assert (q.compare(one, half), q.compare(half, one), q.compare(one, one)) == (1, -1, 0)
    assert (q.sign(-one), q.sign(Fraction(0)), q.sign(one)) == (-1, 0, 1)
    assert q.as_int64(one) == 1
    assert q.as_int64(half) is None
    assert q.as_int64(q.parse_quantity("8Ei").value) == 2**63 - 1  # binary SI is capped
    assert q.as_int64(q.parse_quantity("10E").value) is None  # 10^19 overflows int64
