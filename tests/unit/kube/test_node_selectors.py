"""``services.kube.node_selectors`` against Kubernetes' node affinity (component-helpers v0.31.3).

Mirrors ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity_test.go``
(TestNodeSelectorMatch, TestPreferredSchedulingTermsScore,
TestNodeSelectorRequirementsAsSelector, TestPodMatchesNodeSelectorAndAffinityTerms)
in table form. The rows of `GO_SETTLED` were settled by running Go: a program
gave each selector to ``nodeaffinity.NewNodeSelector`` and
``NewLazyErrorNodeSelector`` and matched it against `GO_NODE`; the error
texts are Go's, verbatim. `PARSE_INT64` was settled with ``strconv.ParseInt(s, 10, 64)``.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.kube.node_selectors import (
    NodeSelector,
    NodeSelectorError,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
    merge_requirements,
    node_name_selector,
    node_selector_matches,
)
from services.kube.strconv import parse_int64

Obj = dict[str, Any]

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
_OPS = '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'


def expr(key: str, op: str, *values: str, field: bool = False) -> Obj:
    req: Obj = {"key": key, "operator": op}
    if values:
        req["values"] = list(values)
    return req


def sel(*terms: Obj) -> Obj:
    return {"nodeSelectorTerms": list(terms)}


def term(*exprs: Obj, fields: tuple[Obj, ...] = ()) -> Obj:
    t: Obj = {}
    if exprs:
        t["matchExpressions"] = list(exprs)
    if fields:
        t["matchFields"] = list(fields)
    return t


def node(name: str, **labels: str) -> Obj:
    return {"metadata": {"name": name, "labels": labels}}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("5", 5), ("+5", 5), ("-5", -5), ("010", 10), ("-9223372036854775808", -(2**63)),
        ("1_0", None), (" 5", None), ("5 ", None), ("0x10", None), ("", None), ("+", None),
        ("9223372036854775808", None), ("\u0665", None),
    ],
)  # fmt: skip
def test_parse_int64_as_strconv(text: str, value: int | None) -> None:
    assert parse_int64(text) == value


GO_NODE = node("n1", a="1_0", b="7", c="+5", d=" 5", gpu="yes")

# (selector, NewNodeSelector's error or None, Match (strict), lazy Match)
GO_SETTLED: list[tuple[Obj, str | None, bool, bool]] = [
    # The "1_0" drift: Go's ParseInt refuses the label, so Gt 5 does not match.
    (sel(term(expr("a", "Gt", "5"))), None, False, False),
    (sel(term(expr("b", "Gt", "5"))), None, True, True),
    (sel(term(expr("c", "Gt", "4"))), None, True, True),  # a label "+5" is the number 5
    (sel(term(expr("d", "Lt", "9"))), None, False, False),  # " 5" is no number
    (
        sel(term(expr("b", "Gt", "+5"))),  # "+5" parses, but is no label value
        f'nodeSelectorTerms[0].matchExpressions[0].values[0][b]: Invalid value: "+5": {_LABEL_VALUE}',
        False, False,
    ),
    (
        sel(term(expr("b", "Gt", "x"))),
        "nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: \"x\": "
        "for 'Gt', 'Lt' operators, the value must be an integer",
        False, False,
    ),
    (
        sel(term(expr("b", "Near", "x"))),
        f'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Near": supported values: {_OPS}',
        False, False,
    ),
    (
        sel(term(expr("b", "In"))),
        "nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string(nil): "
        "for 'in', 'notin' operators, values set can't be empty",
        False, False,
    ),
    (
        sel(term({"key": "b", "operator": "In", "values": []})),
        "nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string{}: "
        "for 'in', 'notin' operators, values set can't be empty",
        False, False,
    ),
    (
        sel(term(expr("b", "Exists", "x"))),
        'nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string{"x"}: '
        "values set must be empty for exists and does not exist",
        False, False,
    ),
    (
        sel(term(expr("-bad", "Exists"))),
        f'nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "-bad": {_NAME_PART}',
        False, False,
    ),
    (
        sel(term(expr("b", "In", "-bad"))),
        f'nodeSelectorTerms[0].matchExpressions[0].values[0][b]: Invalid value: "-bad": {_LABEL_VALUE}',
        False, False,
    ),
    (
        sel(term(fields=(expr("metadata.name", "Exists"),))),
        'nodeSelectorTerms[0].matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"',
        False, False,
    ),
    (
        sel(term(fields=(expr("metadata.name", "In", "n1", "n2"),))),
        'nodeSelectorTerms[0].matchFields[0].values: Invalid value: []string{"n1", "n2"}: must have one element',
        False, False,
    ),
    (sel(term(fields=(expr("metadata.name", "In", "n1"),))), None, True, True),
    # Field keys are not checked when parsing; a field other than metadata.name reads as "".
    (sel(term(fields=(expr("metadata.uid", "In", "n1"),))), None, False, False),
    (sel(term(fields=(expr("metadata.uid", "NotIn", "n1"),))), None, True, True),
    (
        sel(term(expr("b", "Gt", "x"), expr("b", "Near")), term(fields=(expr("metadata.name", "Exists"),))),
        "[nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, "
        "the value must be an integer, nodeSelectorTerms[0].matchExpressions[1].operator: Unsupported value: "
        f'"Near": supported values: {_OPS}, nodeSelectorTerms[1].matchFields[0].operator: Unsupported value: '
        '"Exists": supported values: "In", "NotIn"]',
        False, False,
    ),
    # A lazy selector still matches with its valid terms.
    (
        sel(term(expr("b", "Gt", "x")), term(expr("gpu", "Exists"))),
        "nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: \"x\": "
        "for 'Gt', 'Lt' operators, the value must be an integer",
        False, True,
    ),
    (sel({}), None, False, False),
    (sel(), None, False, False),
    (
        sel(term(expr("b", "Gt", "1", "2"))),
        'nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string{"1", "2"}: '
        "for 'Gt', 'Lt' operators, exactly one value is required",
        False, False,
    ),
    (sel(term(expr("gpu", "In", "yes"), fields=(expr("metadata.name", "NotIn", "n1"),))), None, False, False),
]  # fmt: skip


@pytest.mark.parametrize(("selector", "error", "strict", "lazy"), GO_SETTLED)
def test_settled_with_go(selector: Obj, error: str | None, strict: bool, lazy: bool) -> None:
    if error is None:
        assert NodeSelector.parse(selector).matches(GO_NODE) is strict
    else:
        with pytest.raises(NodeSelectorError) as err:
            NodeSelector.parse(selector)
        assert str(err.value) == error
    assert NodeSelector.parse_lazy(selector).matches(GO_NODE) is lazy
    assert node_selector_matches(selector, GO_NODE) is lazy


# TestNodeSelectorMatch
_LABEL_1 = expr("label_1", "In", "label_1_val")
_HOST_1 = expr("metadata.name", "In", "host_1")


@pytest.mark.parametrize(
    ("name", "selector", "the_node", "error", "match"),
    [
        ("nil node", sel(), None, None, False),
        (
            "invalid field selector and label selector",
            sel(
                term(fields=(expr("metadata.name", "In", "host_1", "host_2"),)),
                term(_LABEL_1, fields=(_HOST_1,)),
                term(expr("invalid key", "In", "label_value")),
            ),
            None,
            '[nodeSelectorTerms[0].matchFields[0].values: Invalid value: []string{"host_1", "host_2"}: must have '
            f'one element, nodeSelectorTerms[2].matchExpressions[0].key: Invalid value: "invalid key": {_NAME_PART}]',
            False,
        ),
        ("node matches field selector, but not labels", sel(term(_LABEL_1, fields=(_HOST_1,))), node("host_1"),
         None, False),
        ("node matches field selector and label selector", sel(term(_LABEL_1, fields=(_HOST_1,))),
         node("host_1", label_1="label_1_val"), None, True),
        ("second term matches", sel(term(_LABEL_1), term(fields=(_HOST_1,))), node("host_1"), None, True),
    ],
)  # fmt: skip
def test_node_selector_match(name: str, selector: Obj, the_node: Obj | None, error: str | None, match: bool) -> None:
    if error is not None:
        with pytest.raises(NodeSelectorError) as err:
            NodeSelector.parse(selector)
        assert str(err.value) == error
        return
    assert NodeSelector.parse(selector).matches(the_node) is match


# TestPreferredSchedulingTermsScore
@pytest.mark.parametrize(
    ("name", "terms", "error", "score"),
    [
        (
            "invalid field selector and label selector",
            [
                {"weight": 1, "preference": term(fields=(expr("metadata.name", "In", "host_1", "host_2"),))},
                {"weight": 1, "preference": term(_LABEL_1, fields=(_HOST_1,))},
                {"weight": 1, "preference": term(expr("invalid key", "In", "label_value"))},
            ],
            '[[0].matchFields[0].values: Invalid value: []string{"host_1", "host_2"}: must have one element, '
            f'[2].matchExpressions[0].key: Invalid value: "invalid key": {_NAME_PART}]',
            0,
        ),
        (
            "invalid field selector but no weight, error not reported",
            [{"weight": 0, "preference": term(fields=(expr("metadata.name", "In", "host_1", "host_2"),))}],
            None,
            0,
        ),
        (
            "first and third term match",
            [
                {"weight": 5, "preference": term(fields=(_HOST_1,))},
                {"weight": 7, "preference": term(expr("unknown_label", "In", "unknown_label_val"))},
                {"weight": 11, "preference": term(_LABEL_1)},
            ],
            None,
            16,
        ),
    ],
)
def test_preferred_scheduling_terms_score(name: str, terms: list[Obj], error: str | None, score: int) -> None:
    if error is not None:
        with pytest.raises(NodeSelectorError) as err:
            PreferredSchedulingTerms.parse(terms)
        assert str(err.value) == error
        return
    assert PreferredSchedulingTerms.parse(terms).score(node("host_1", label_1="label_1_val")) == score


# TestNodeSelectorRequirementsAsSelector (one term of requirements)
@pytest.mark.parametrize(
    ("requirements", "matches", "error"),
    [
        ([expr("foo", "In", "bar", "baz")], {"foo": "baz"}, None),
        ([expr("foo", "Exists", "bar", "baz")], None, "values set must be empty for exists and does not exist"),
        ([expr("foo", "Gt", "1")], {"foo": "2"}, None),
        ([expr("bar", "Lt", "7")], {"bar": "6"}, None),
        ([expr("baz", "invalid", "5")], None, 'Unsupported value: "invalid"'),
    ],
)
def test_requirements_as_selector(requirements: list[Obj], matches: dict[str, str] | None, error: str | None) -> None:
    selector = sel(term(*requirements))
    if error is not None:
        with pytest.raises(NodeSelectorError, match=error):
            NodeSelector.parse(selector)
        return
    assert matches is not None
    assert NodeSelector.parse(selector).matches(node("n", **matches))
    assert not NodeSelector.parse(selector).matches(node("n"))


def pod(node_selector: dict[str, str] | None = None, required: Obj | None = None) -> Obj:
    spec: Obj = {}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if required is not None:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    return {"spec": spec}


# TestPodMatchesNodeSelectorAndAffinityTerms
@pytest.mark.parametrize(
    ("name", "the_pod", "labels", "fits"),
    [
        ("no selector", pod(), {}, True),
        ("missing labels", pod({"foo": "bar"}), {}, False),
        ("same labels", pod({"foo": "bar"}), {"foo": "bar"}, True),
        ("node labels are superset", pod({"foo": "bar"}), {"foo": "bar", "baz": "blah"}, True),
        ("node labels are subset", pod({"foo": "bar", "baz": "blah"}), {"foo": "bar"}, False),
        ("In matches", pod(required=sel(term(expr("foo", "In", "bar", "value2")))), {"foo": "bar"}, True),
        ("Gt matches", pod(required=sel(term(expr("kernel-version", "Gt", "0204")))),
         {"kernel-version": "0206"}, True),
        ("NotIn matches", pod(required=sel(term(expr("mem-type", "NotIn", "DDR", "DDR2")))),
         {"mem-type": "DDR3"}, True),
        ("Exists matches", pod(required=sel(term(expr("GPU", "Exists")))), {"GPU": "NVIDIA-GRID-K1"}, True),
        ("affinity does not match", pod(required=sel(term(expr("foo", "In", "value1", "value2")))),
         {"foo": "bar"}, False),
        ("no terms", pod(required=sel()), {"foo": "bar"}, False),
        ("empty matchExpressions", pod(required=sel(term())), {"foo": "bar"}, False),
        ("ANDed, matches", pod(required=sel(term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")))),
         {"GPU": "NVIDIA-GRID-K1"}, True),
        ("ANDed, does not match", pod(required=sel(term(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")))),
         {"GPU": "NVIDIA-GRID-K1"}, False),
        ("ORed terms", pod(required=sel(term(expr("foo", "In", "bar", "value2")), term(expr("diffkey", "In", "wrong")))),
         {"foo": "bar"}, True),
        ("affinity and nodeSelector both match", pod({"foo": "bar"}, sel(term(expr("foo", "Exists")))),
         {"foo": "bar"}, True),
        ("affinity matches, nodeSelector does not", pod({"foo": "bar"}, sel(term(expr("foo", "Exists")))),
         {"foo": "barrrrrr"}, False),
        ("invalid value in affinity", pod(required=sel(term(expr("foo", "NotIn", "invalid value: ___@#$%^")))),
         {"foo": "bar"}, False),
        ("matchFields In matches", pod(required=sel(term(fields=(expr("metadata.name", "In", "node_1"),)))), {},
         True),
        ("matchFields In does not match", pod(required=sel(term(fields=(expr("metadata.name", "In", "node_2"),)))),
         {}, False),
        ("two terms: fields do not match, labels do",
         pod(required=sel(term(fields=(expr("metadata.name", "In", "node_2"),)), term(expr("foo", "In", "bar")))),
         {"foo": "bar"}, True),
        ("one term: fields do not match, labels do",
         pod(required=sel(term(expr("foo", "In", "bar"), fields=(expr("metadata.name", "In", "node_2"),)))),
         {"foo": "bar"}, False),
        ("one term: both match",
         pod(required=sel(term(expr("foo", "In", "bar"), fields=(expr("metadata.name", "In", "node_1"),)))),
         {"foo": "bar"}, True),
        ("two terms: neither matches",
         pod(required=sel(term(fields=(expr("metadata.name", "In", "node_2"),)), term(expr("foo", "In", "not-match")))),
         {"foo": "bar"}, False),
    ],
)  # fmt: skip
def test_pod_matches_node_selector_and_affinity_terms(
    name: str, the_pod: Obj, labels: dict[str, str], fits: bool
) -> None:
    assert RequiredNodeAffinity.of_pod(the_pod).matches(node("node_1", **labels)) is fits


# The chaos binding check's cases (it uses the same matcher).
CHAOS_NODE = node("node-1", zone="a", gpus="8")


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        (sel(term(fields=(expr("metadata.name", "In", "node-1"),))), True),
        (sel(term(fields=(expr("metadata.name", "In", "node-2"),))), False),
        (sel(term(expr("zone", "NotIn", "b"))), True),
        (sel(term(expr("zone", "DoesNotExist"))), False),
        (sel(term(expr("gpus", "Gt", "4"))), True),
        (sel({}, term(expr("zone", "Exists"))), True),
        (sel({}), False),
        (sel(), False),
    ],
)
def test_node_selector_matches(selector: Obj, matches: bool) -> None:
    assert node_selector_matches(selector, CHAOS_NODE) is matches


def test_allocation_node_selector_merges_requirements_once() -> None:
    into: list[Obj] = [{"key": "zone", "operator": "In", "values": ["a", "b"]}]
    merge_requirements(into, [expr("zone", "In", "b", "a"), expr("gpu", "Exists")])
    assert into == [{"key": "zone", "operator": "In", "values": ["a", "b"]}, {"key": "gpu", "operator": "Exists"}]
    assert NodeSelector.parse(node_name_selector("n1")).matches(node("n1"))
    assert not NodeSelector.parse(node_name_selector("n1")).matches(node("n2"))


# Each operator, ANDed requirements and ORed terms (the allocator's table, moved here).
def selector(*exprs: Obj, fields: tuple[Obj, ...] = ()) -> Obj:
    return sel(term(*exprs, fields=fields))


LABELS = {"region": "r1", "gpus": "4", "zone": "z"}
MATCH_CASES: list[tuple[Obj, bool]] = [
    (selector(expr("region", "In", "r1", "r2")), True),
    (selector(expr("region", "In", "r2")), False),
    (selector(expr("region", "NotIn", "r2")), True),
    (selector(expr("missing", "NotIn", "r2")), True),
    (selector(expr("region", "NotIn", "r1")), False),
    (selector(expr("zone", "Exists")), True),
    (selector(expr("missing", "Exists")), False),
    (selector(expr("missing", "DoesNotExist")), True),
    (selector(expr("zone", "DoesNotExist")), False),
    (selector(expr("gpus", "Gt", "3")), True),
    (selector(expr("gpus", "Gt", "4")), False),
    (selector(expr("gpus", "Lt", "5")), True),
    (selector(expr("region", "Lt", "5")), False),  # not an integer label
    (selector(expr("missing", "Gt", "1")), False),
    (selector(expr("region", "In", "r1"), expr("zone", "In", "other")), False),  # AND
    (selector(fields=(expr("metadata.name", "In", "node-1"),)), True),
    (selector(fields=(expr("metadata.name", "In", "node-2"),)), False),
    (selector(fields=(expr("metadata.name", "NotIn", "node-2"),)), True),
    (selector(expr("region", "In", "r1"), fields=(expr("metadata.name", "In", "node-2"),)), False),
    ({"nodeSelectorTerms": [{}]}, False),  # an empty term matches nothing
    (
        {
            "nodeSelectorTerms": [
                {"matchExpressions": [expr("region", "In", "r9")]},
                {"matchExpressions": [expr("zone", "In", "z")]},
            ]
        },
        True,  # terms are ORed
    ),
    ({"nodeSelectorTerms": []}, False),
]


@pytest.mark.parametrize(("sel", "expected"), MATCH_CASES)
def test_each_operator(sel: Obj, expected: bool) -> None:
    assert NodeSelector.parse(sel).matches(node("node-1", **LABELS)) is expected


def test_no_node_matches_no_selector() -> None:
    assert NodeSelector.parse(selector(expr("a", "DoesNotExist"))).matches(None) is False
