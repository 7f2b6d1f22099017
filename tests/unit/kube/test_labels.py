"""``services.kube.labels`` (and the list ``labelSelector`` parser that uses it) and ``services.kube.schema``.

Mirrors the Gt/Lt rows of ``k8s.io/apimachinery/pkg/labels/selector_test.go``
(TestRequirementConstructor, TestSelectorMatches). The cases marked "Go" were
settled by running ``labels.Parse`` and ``Selector.Matches`` in Go; before
``services.kube.labels`` the list selector parsed with ``int()`` and matched
``n>5`` against a label ``1_0``, accepted ``n>1_0``, and worded an empty key
name differently (checked on 81aa4d8).
"""

from __future__ import annotations

import pytest

from services.api.machinery.selectors import SelectorError, parse_label_selector
from services.kube.labels import Requirement
from services.kube.schema import parse_group_version

_NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


@pytest.mark.parametrize(
    ("selector", "label", "matches"),
    [
        ("n>5", "7", True),  # Go
        ("n>5", "+10", True),  # Go: ParseInt takes a sign
        ("n>5", "1_0", False),  # Go: ParseInt refuses underscores
        ("n<5", "7", False),  # Go
        ("n<5", "+10", False),  # Go
        ("n<5", "1_0", False),  # Go
        ("n<5", "-3", True),
        ("n>5", " 7", False),
        ("m>5", "7", False),  # no such label
    ],
)
def test_gt_lt_match_as_go(selector: str, label: str, matches: bool) -> None:
    assert parse_label_selector(selector).matches({"n": label}) is matches


@pytest.mark.parametrize(
    ("selector", "error"),
    [
        ("n>1_0", "values[0]: Invalid value: \"1_0\": for 'Gt', 'Lt' operators, the value must be an integer"),
        ("n>+5", f'values[0][n]: Invalid value: "+5": {_LABEL_VALUE}'),
        ("a/>5", f'<nil>: Invalid value: "a/": name part must be non-empty; {_NAME_PART}'),
    ],
)
def test_parse_errors_as_go(selector: str, error: str) -> None:
    with pytest.raises(SelectorError) as err:
        parse_label_selector(selector)
    assert str(err.value) == f"unable to parse requirement: {error}"


@pytest.mark.parametrize(
    ("requirement", "labels", "matches"),
    [
        (Requirement("x", "in", frozenset({"a", "b"})), {"x": "a"}, True),
        (Requirement("x", "in", frozenset({"a", "b"})), {}, False),
        (Requirement("x", "=", frozenset({"a"})), {"x": "a"}, True),
        (Requirement("x", "==", frozenset({"a"})), {"x": "b"}, False),
        (Requirement("x", "notin", frozenset({"a"})), {}, True),
        (Requirement("x", "!=", frozenset({"a"})), {"x": "a"}, False),
        (Requirement("x", "exists"), {"x": ""}, True),
        (Requirement("x", "!"), {"x": ""}, False),
        (Requirement("x", "gt", frozenset({"1"}), 1), {"x": "2"}, True),
        (Requirement("x", "lt", frozenset({"1"}), 1), {"x": "2"}, False),
        (Requirement("x", "gt", frozenset({"1"}), 1), {}, False),
    ],
)
def test_requirement_matches(requirement: Requirement, labels: dict[str, str], matches: bool) -> None:
    assert requirement.matches(labels) is matches


@pytest.mark.parametrize(
    ("api_version", "parsed"),
    [
        ("", ("", "")),
        ("/", ("", "")),
        ("v1", ("", "v1")),
        ("resource.k8s.io/v1alpha3", ("resource.k8s.io", "v1alpha3")),
        ("a/b/c", None),
        ("/v1", ("", "v1")),
    ],
)
def test_parse_group_version(api_version: str, parsed: tuple[str, str] | None) -> None:
    # schema.ParseGroupVersion (apimachinery pkg/runtime/schema/group_version_test.go's table)
    assert parse_group_version(api_version) == parsed
