"""Rendering of field errors against apimachinery 1.31's field.Error wording."""

from __future__ import annotations

from typing import Any

import pytest

from services.api.machinery import field_errors as fe
from services.api.machinery.field_errors import FieldError, Verbatim, format_value, go_float, go_quote

# (error, rendered message, Status cause reason)
CASES: list[tuple[FieldError, str, str]] = [
    (fe.required("spec.x"), "spec.x: Required value", "FieldValueRequired"),
    (
        fe.required("metadata.name", "name or generateName is required"),
        "metadata.name: Required value: name or generateName is required",
        "FieldValueRequired",
    ),
    (
        fe.invalid("spec.count", 0, "must be greater than zero"),
        "spec.count: Invalid value: 0: must be greater than zero",
        "FieldValueInvalid",
    ),
    (fe.invalid("metadata.name", "Foo", "bad"), 'metadata.name: Invalid value: "Foo": bad', "FieldValueInvalid"),
    (fe.invalid("x", None, "d"), "x: Invalid value: null: d", "FieldValueInvalid"),
    (fe.invalid("x", True, "d"), "x: Invalid value: true: d", "FieldValueInvalid"),
    (fe.invalid("x", ["a", "b"], "d"), 'x: Invalid value: []string{"a", "b"}: d', "FieldValueInvalid"),
    (fe.type_invalid("x", "1a", "d"), 'x: Invalid value: "1a": d', "FieldValueTypeInvalid"),
    (
        fe.duplicate("spec.devices.requests[1].name", "gpu"),
        'spec.devices.requests[1].name: Duplicate value: "gpu"',
        "FieldValueDuplicate",
    ),
    (
        fe.not_supported("spec.devices.requests[0].allocationMode", "Some", ["All", "ExactCount"]),
        'spec.devices.requests[0].allocationMode: Unsupported value: "Some": supported values: "All", "ExactCount"',
        "FieldValueNotSupported",
    ),
    (
        fe.forbidden("status.reservedFor", "may not be specified when `allocated` is not set"),
        "status.reservedFor: Forbidden: may not be specified when `allocated` is not set",
        "FieldValueForbidden",
    ),
    # TooLong never shows the value; 1.31's TooLong says "bytes", TooLongMaxLength does not.
    (
        fe.too_long("metadata.annotations", "", 262144),
        "metadata.annotations: Too long: must have at most 262144 bytes",
        "FieldValueTooLong",
    ),
    (
        fe.too_long_max_length("status.reservedFor", 33, 32),
        "status.reservedFor: Too long: may not be longer than 32",
        "FieldValueTooLong",
    ),
    (fe.too_long_max_length("x", "v", -1), "x: Too long: value is too long", "FieldValueTooLong"),
    (
        fe.too_many("spec.devices", 129, 128),
        "spec.devices: Too many: 129: must have at most 128 items",
        "FieldValueTooMany",
    ),
    (fe.too_many("spec.devices", -1, -1), "spec.devices: Too many: has too many items", "FieldValueTooMany"),
    (
        fe.not_found("spec.containers[0].resources.claims[0]", "gpu", "must be one of the names"),
        'spec.containers[0].resources.claims[0]: Not found: "gpu": must be one of the names',
        "FieldValueNotFound",
    ),
    (fe.internal("spec", "boom"), "spec: Internal error: boom", "InternalError"),
]


@pytest.mark.parametrize(("error", "message", "reason"), CASES, ids=[c[1][:60] for c in CASES])
def test_rendering(error: FieldError, message: str, reason: str) -> None:
    assert str(error) == message
    cause = error.cause()
    assert cause == {"reason": reason, "message": message.split(": ", 1)[1], "field": error.field}


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("plain", '"plain"'),
        ('a"b', '"a\\"b"'),
        ("back\\slash", '"back\\\\slash"'),
        ("tab\tnewline\n", '"tab\\tnewline\\n"'),
        ("\x00\x7f", '"\\x00\\x7f"'),
        ("é ü", '"é ü"'),  # printable Unicode stays (JSON-style \u escapes would be wrong)
        ("\u00a0", '"\\u00a0"'),  # non-breaking space is not printable for Go
        ("<&>", '"<&>"'),
    ],
)
def test_go_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (1.0, "1"),
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (-2.5, "-2.5"),
    ],
)
def test_go_float(value: float, shown: str) -> None:
    assert go_float(value) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (5, "5"),
        (False, "false"),
        (Verbatim("2024-01-02 03:04:05 +0000 UTC"), "2024-01-02 03:04:05 +0000 UTC"),
        ({"b": 1, "a": 2}, '{"a":2,"b":1}'),
        ([{"a": 1}], '[{"a":1}]'),
    ],
)
def test_format_value(value: Any, shown: str) -> None:
    assert format_value(value) == shown
