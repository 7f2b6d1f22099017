"""Quantity parsing/printing and semantic equality, the two value semantics validation relies on."""

from __future__ import annotations

from typing import Any

import pytest

from services.api.admission.validation.equality import semantic_equal
from services.kube.quantity import wire_quantity as parse_quantity


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("1", "1"),
        ("0", "0"),
        ("1000m", "1"),
        ("0.5", "500m"),
        ("1500", "1500"),
        ("2000", "2k"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1536Mi", "1536Mi"),
        ("1.5Gi", "1536Mi"),
        ("0.5Gi", "512Mi"),
        ("1e3", "1e3"),
        ("0.1n", "1n"),  # below nano precision rounds up
        ("-1", "-1"),
        (12, "12"),
        (1.5, "1500m"),
        ("1e99", "1e99"),  # settled with Go: only binary SI is capped
        ("16Ei", "9223372036854775807"),  # capped at MaxInt64 like Kubernetes
        ("\u00a01Gi ", "1Gi"),  # UnmarshalJSON trims (strings.TrimSpace)
    ],
)
def test_canonical_form(raw: Any, canonical: str) -> None:
    quantity = parse_quantity(raw)
    assert quantity is not None
    assert str(quantity) == canonical


@pytest.mark.parametrize("raw", ["", "abc", "1.2.3", "1ki", "1e", "1e99999999999", "\x1f1", True, None, [1]])
def test_not_a_quantity(raw: Any) -> None:
    assert parse_quantity(raw) is None


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ({"count": 0}, {}, True),
        ({"config": []}, {"config": None}, True),
        ({"a": {"b": ""}}, {"a": {}}, True),
        ({"allNodes": False}, {}, True),
        ({"count": 1}, {}, False),
        ({"list": [1, 2]}, {"list": [2, 1]}, False),
        ({"list": [{"x": 0}]}, {"list": [{}]}, True),
        ({"name": "a"}, {"name": "b"}, False),
    ],
)
def test_semantic_equal(a: Any, b: Any, equal: bool) -> None:
    assert semantic_equal(a, b) is equal
    assert semantic_equal(b, a) is equal
