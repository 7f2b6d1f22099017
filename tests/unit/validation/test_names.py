"""Name formats and messages (apimachinery util/validation, 1.31)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from services.api.admission.validation import names

from .objects import C_IDENTIFIER_MSG, LABEL_MSG, LABEL_VALUE_MSG, NAME_PART_MSG, SUBDOMAIN_MSG

PREFIX_SUBDOMAIN = "prefix part " + SUBDOMAIN_MSG
TOO_MANY_SLASHES = (
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
    "(e.g. 'example.com/MyName')"
)

CASES: list[tuple[str, Callable[[str], list[str]], str, list[str]]] = [
    ("label ok", names.is_dns1123_label, "gpu-0", []),
    ("label digits first", names.is_dns1123_label, "0abc", []),
    ("label upper", names.is_dns1123_label, "Gpu", [LABEL_MSG]),
    ("label dots", names.is_dns1123_label, "a.b", ["must not contain dots"]),
    ("label empty", names.is_dns1123_label, "", [LABEL_MSG]),
    ("label trailing newline", names.is_dns1123_label, "abc\n", [LABEL_MSG]),
    ("label too long", names.is_dns1123_label, "a" * 64, ["must be no more than 63 characters"]),
    ("subdomain ok", names.is_dns1123_subdomain, "gpu.example.com", []),
    ("subdomain bad", names.is_dns1123_subdomain, "gpu..example", [SUBDOMAIN_MSG]),
    ("subdomain too long", names.is_dns1123_subdomain, "a" * 254, ["must be no more than 253 characters"]),
    ("qualified ok", names.is_qualified_name, "example.com/My_Name.1", []),
    ("qualified plain ok", names.is_qualified_name, "MyName", []),
    ("qualified empty prefix", names.is_qualified_name, "/name", ["prefix part must be non-empty"]),
    ("qualified bad prefix", names.is_qualified_name, "Ex!/name", [PREFIX_SUBDOMAIN]),
    ("qualified empty name", names.is_qualified_name, "example.com/", ["name part must be non-empty", NAME_PART_MSG]),
    ("qualified long name", names.is_qualified_name, "a" * 64, ["name part must be no more than 63 characters"]),
    ("qualified bad name", names.is_qualified_name, "-x", [NAME_PART_MSG]),
    ("qualified slashes", names.is_qualified_name, "a/b/c", [TOO_MANY_SLASHES]),
    ("label value ok", names.is_valid_label_value, "my_value-1.0", []),
    ("label value empty ok", names.is_valid_label_value, "", []),
    ("label value bad", names.is_valid_label_value, "spaces not allowed", [LABEL_VALUE_MSG]),
    ("label value long", names.is_valid_label_value, "a" * 64, ["must be no more than 63 characters"]),
    ("c identifier ok", names.is_c_identifier, "_my_Name1", []),
    ("c identifier bad", names.is_c_identifier, "1abc", [C_IDENTIFIER_MSG]),
]


@pytest.mark.parametrize(("check", "value", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_formats(check: Callable[[str], list[str]], value: str, expected: list[str]) -> None:
    assert check(value) == expected


def test_length_counts_bytes() -> None:
    # 32 two-byte characters are 64 bytes, like Go's len().
    assert names.is_valid_label_value("é" * 32)[0] == "must be no more than 63 characters"


@pytest.mark.parametrize(
    ("name", "prefix", "expected"),
    [
        ("pod-", True, []),  # a generateName prefix may end with '-'
        ("pod-", False, [SUBDOMAIN_MSG]),
        ("Pod-", True, [SUBDOMAIN_MSG]),
    ],
)
def test_generate_name_prefix(name: str, prefix: bool, expected: list[str]) -> None:
    assert names.name_is_dns_subdomain(name, prefix) == expected


@pytest.mark.parametrize(
    ("name", "prefix", "expected"),
    [
        ("ok.name", False, []),
        (".", False, ["may not be '.'"]),
        ("..", False, ["may not be '..'"]),
        ("a/b%c", False, ["may not contain '/'", "may not contain '%'"]),
        ("..", True, []),
    ],
)
def test_path_segment_name(name: str, prefix: bool, expected: list[str]) -> None:
    assert names.path_segment_name(name, prefix) == expected
