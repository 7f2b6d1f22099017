"""Label and field selectors: Kubernetes' grammar, matching and error messages."""

from __future__ import annotations

import pytest

from services.api.machinery.selectors import SelectorError, object_filter, parse_field_selector, parse_label_selector
from services.api.types.registry import by_resource

LABELS = {"app": "web", "tier": "front", "n": "5"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app!=web", False),
        ("app!=db", True),
        ("missing!=x", True),
        ("app in (web,db)", True),
        ("app in (db)", False),
        ("app notin (db)", True),
        ("missing notin (db)", True),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("app=web,tier=front", True),
        ("app=web,tier=back", False),
        ("n>3", True),
        ("n<3", False),
        ("missing>1", False),
        ("  app = web  ,  tier  ", True),
        ("x in (in,notin)", False),
        ("app in (web,,db)", True),
    ],
)
def test_label_selector_matches(selector: str, matches: bool) -> None:
    assert parse_label_selector(selector).matches(LABELS) is matches


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a,", "found '', expected: identifier after ','"),
        ("a=b=c", "found '=', expected: ',' or 'end of string'"),
        ("app in a", "unable to parse requirement: found 'a' expected: '('"),
        ("app in (a", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("=a", "found '=', expected: !, identifier, or 'end of string'"),
        (
            "n>x",
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, "
            "the value must be an integer",
        ),
    ],
)
def test_label_selector_errors(selector: str, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        parse_label_selector(selector)
    assert str(err.value) == message


def test_label_selector_invalid_key_message() -> None:
    with pytest.raises(SelectorError) as err:
        parse_label_selector("app:monolith")
    assert str(err.value).startswith(
        'unable to parse requirement: <nil>: Invalid value: "app:monolith": name part must consist of'
    )


def test_label_selector_invalid_value_message() -> None:
    with pytest.raises(SelectorError) as err:
        parse_label_selector("app=-bad")
    assert str(err.value).startswith(
        'unable to parse requirement: values[0][app]: Invalid value: "-bad": a valid label'
    )


def test_field_selector_parse_and_escape() -> None:
    sel = parse_field_selector(r"metadata.name=a\,b,spec.nodeName!=n1")
    assert [(t.field, t.value, t.negate) for t in sel.terms] == [
        ("metadata.name", "a,b", False),
        ("spec.nodeName", "n1", True),
    ]
    with pytest.raises(SelectorError) as err:
        parse_field_selector("bogus")
    assert str(err.value) == "invalid selector: 'bogus'; can't understand 'bogus'"


POD = {
    "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "web"}},
    "spec": {"nodeName": "n1"},
    "status": {"phase": "Running"},
}


@pytest.mark.parametrize(
    ("field", "matches"),
    [
        ("metadata.name=p", True),
        ("metadata.namespace=other", False),
        ("spec.nodeName=n1", True),
        ("spec.nodeName=", False),
        ("spec.nodeName!=n1", False),
        ("status.phase=Running", True),
        ("status.phase!=Pending,spec.nodeName=n1", True),
    ],
)
def test_pod_field_selectors(field: str, matches: bool) -> None:
    rt = by_resource("", "pods")
    assert rt is not None
    predicate = object_filter(rt, field_selector=field)
    assert predicate is not None
    assert predicate(POD) is matches


def test_field_selector_unsupported_wording_depends_on_kind() -> None:
    pods, claims = by_resource("", "pods"), by_resource("resource.k8s.io", "resourceclaims")
    assert pods is not None and claims is not None
    with pytest.raises(SelectorError) as err:
        object_filter(pods, field_selector="spec.foo=1")
    assert str(err.value) == "field label not supported: spec.foo"
    with pytest.raises(SelectorError) as err:
        object_filter(claims, field_selector="spec.foo=1")
    assert str(err.value) == '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"'


def test_slice_and_event_field_selectors() -> None:
    slices, events = by_resource("resource.k8s.io", "resourceslices"), by_resource("", "events")
    assert slices is not None and events is not None
    sl = {"metadata": {"name": "s"}, "spec": {"driver": "gpu.example.com", "nodeName": "n1"}}
    f = object_filter(slices, field_selector="spec.driver=gpu.example.com,spec.nodeName=n1")
    assert f is not None and f(sl)
    ev = {"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p", "uid": "u1"}}
    f = object_filter(events, field_selector="involvedObject.kind=Pod,involvedObject.name=p,involvedObject.uid=u1")
    assert f is not None and f(ev)
    f = object_filter(events, field_selector="involvedObject.name=q")
    assert f is not None and not f(ev)


def test_combined_filter_and_empty() -> None:
    pods = by_resource("", "pods")
    assert pods is not None
    assert object_filter(pods) is None
    f = object_filter(pods, label_selector="app=web", field_selector="spec.nodeName=n1")
    assert f is not None and f(POD)
    f = object_filter(pods, label_selector="app=db", field_selector="spec.nodeName=n1")
    assert f is not None and not f(POD)
