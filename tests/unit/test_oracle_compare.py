"""The oracle suite's pure parts: scenario loading, normalisation, diffing and the known-differences list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.oracle import compare, normalise
from tests.support.oracle.scenario import HttpStep, KubectlStep, ScenarioError, dig, load_all, parse, substitute

CTX = normalise.Context(server="https://127.0.0.1:34567", variables={"RV1": "1234"})


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("6c1b7a8e-2f7e-4d52-9a57-0f9c1c2b3d4e", "<uid>"),
        ("2026-12-02T10:17:18Z", "<time>"),
        ("at 2026-12-02T10:17:18.123456Z then", "at <time> then"),
        ("Get https://127.0.0.1:34567/api/v1: refused", "Get <server>/api/v1: refused"),
        ("dial tcp 127.0.0.1:34567: refused", "dial tcp <server>: refused"),
        ("1234", "<$RV1>"),
        ("too old resource version: 1234 (1300)", "too old resource version: <$RV1> (1300)"),
        ("12345", "12345"),  # a captured value is replaced only as a whole token
        ("plain", "plain"),
        ("too old resource version: 1 (377)", "too old resource version: <rv> (<rv>)"),
    ],
)
def test_strings(raw: str, want: str) -> None:
    assert normalise.text(raw, CTX) == want


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("NAME     STATE     AGE", "NAME STATE AGE"),
        ("claim    pending   0s", "claim pending <age>"),
        ("claim    pending   5m3s", "claim pending <age>"),
        ("tpl      12d", "tpl <age>"),
        ("x <invalid>", "x <age>"),
        ("gpu-5s-ok   1", "gpu-5s-ok 1"),  # a name is not an age
    ],
)
def test_kubectl_text(line: str, want: str) -> None:
    assert normalise.kubectl_text(line, CTX) == [want]


def test_object_rules() -> None:
    doc: dict[str, Any] = {
        "kind": "ResourceClaim",
        "metadata": {
            "name": "claim-x7k2p",
            "generateName": "claim-",
            "uid": "6c1b7a8e-2f7e-4d52-9a57-0f9c1c2b3d4e",
            "resourceVersion": "88",
            "creationTimestamp": "2026-12-02T10:17:18Z",
            "managedFields": [{"manager": "kubectl", "time": "2026-12-02T10:17:18Z"}],
        },
        "spec": {"count": 1, "list": ["b", "a"]},
    }
    assert normalise.value(doc, CTX) == {
        "kind": "ResourceClaim",
        "metadata": {
            "name": "claim-<suffix>",
            "generateName": "claim-",
            "uid": "<uid>",
            "resourceVersion": "<rv>",
            "creationTimestamp": "<time>",
            "managedFields": [{"manager": "kubectl", "time": "<time>"}],
        },
        "spec": {"count": 1, "list": ["b", "a"]},  # order is kept
    }


def test_managed_fields_sorted_without_time() -> None:
    entries = [
        {"manager": "python-requests", "operation": "Update", "time": "2026-12-02T10:17:18Z"},
        {"manager": "kubectl-label", "operation": "Update", "time": "2026-12-02T10:17:19Z"},
        {"manager": "zed", "operation": "Apply", "time": "2026-12-02T10:17:20Z"},
    ]
    got = normalise.value({"metadata": {"managedFields": entries}}, CTX)["metadata"]["managedFields"]
    assert [e["manager"] for e in got] == ["zed", "kubectl-label", "python-requests"]


def test_captured_resource_version_keeps_its_name() -> None:
    assert normalise.value({"metadata": {"resourceVersion": "1234"}}, CTX) == {
        "metadata": {"resourceVersion": "<$RV1>"}
    }
    assert normalise.value({"metadata": {"resourceVersion": ""}, "continue": ""}, CTX) == {
        "metadata": {"resourceVersion": ""},
        "continue": "",
    }


def test_table_age_column() -> None:
    table = {
        "kind": "Table",
        "columnDefinitions": [{"name": "Name"}, {"name": "Age"}],
        "rows": [{"cells": ["a", "3s"], "object": {"metadata": {"resourceVersion": "5"}}}],
    }
    got = normalise.value(table, CTX)
    assert got["rows"] == [{"cells": ["a", "<age>"], "object": {"metadata": {"resourceVersion": "<rv>"}}}]


def test_differences_and_flatten() -> None:
    left = {"steps": [{"exit": 0, "stdout": ["a", "b"], "body": {"x": {}, "y": 1}}]}
    right = {"steps": [{"exit": 0, "stdout": ["a"], "body": {"x": {"k": 1}, "z": 2}}]}
    got = {d.path: (d.oracle, d.draplane) for d in compare.differences(left, right)}
    assert got == {
        "steps[0].stdout[1]": ("b", "<absent>"),
        "steps[0].body.x": ({}, "<absent>"),
        "steps[0].body.y": (1, "<absent>"),
        "steps[0].body.x.k": ("<absent>", 1),
        "steps[0].body.z": ("<absent>", 2),
    }
    assert compare.differences(left, left) == []


KNOWN_DOC = """# Compatibility

```yaml oracle-known-differences
- scenario: watch-*
  path: steps[2].events[*].object.metadata.annotations
  reason: draplane stamps an annotation
- scenario: tables-claims
  path: steps[0].stdout[1]
  reason: column wording
- scenario: "*"
  path: "*.spec"
  oracle: {}
  draplane: <absent>
  reason: Go prints an empty struct
```
"""


def test_judge_explains_lists_and_finds_stale_entries() -> None:
    known = compare.parse_known(KNOWN_DOC)
    diff = compare.Difference("steps[2].events[0].object.metadata.annotations", "<absent>", "x")
    other = compare.Difference("steps[1].status", 200, 404)
    verdict = compare.judge("watch-resume", [diff, other], known)
    assert verdict.unexplained == [other]
    assert verdict.explained == [(diff, known[0])]
    assert verdict.stale == [] and not verdict.ok
    stale = compare.judge("tables-claims", [], known)
    assert stale.stale == [known[1]] and not stale.ok
    assert compare.judge("dry-run-create", [], known).ok  # a glob entry is not stale per scenario
    empty_spec = compare.Difference("steps[0].body.spec", {}, "<absent>")
    other_spec = compare.Difference("steps[1].body.spec", {"a": 1}, "<absent>")
    by_value = compare.judge("dry-run-create", [empty_spec, other_spec], known)
    assert by_value.explained == [(empty_spec, known[2])] and by_value.unexplained == [other_spec]
    assert compare.stale_globs(known, [verdict, stale]) == [known[2]]
    assert compare.stale_globs(known, [verdict, by_value]) == []
    text = compare.report("watch-resume", verdict, {"steps": [{"status": 200}]}, {"steps": [{"status": 404}]})
    assert "steps[1].status: kube-apiserver=200 draplane=404" in text
    assert "-- status: 200" in text and "+- status: 404" in text


@pytest.mark.parametrize(
    "block",
    [
        "no block at all",
        "```yaml oracle-known-differences\n- scenario: a\n  path: b\n```\n",  # no reason
        "```yaml oracle-known-differences\n- scenario: a\n  path: b\n  reason: ''\n```\n",
        "```yaml oracle-known-differences\n{a: 1}\n```\n",
    ],
)
def test_malformed_known_differences(block: str) -> None:
    with pytest.raises(compare.KnownDifferencesError):
        compare.parse_known(block)


def test_the_repository_list_parses() -> None:
    assert all(k.reason for k in compare.load_known())


def test_scenario_files_load() -> None:
    scenarios = load_all()
    assert len(scenarios) >= 35
    assert all(s.namespace.startswith("o-") and len(s.namespace) <= 63 for s in scenarios)


def test_parse_steps_and_errors(tmp_path: Path) -> None:
    (s,) = parse(
        """
scenarios:
  - id: one
    about: x
    steps:
      - kubectl: get resourceclaims -o json
        output: json
        capture: {RV: metadata.resourceVersion}
      - http: get /api/v1/namespaces/${NS}
        watch: true
""",
        tmp_path / "a.yaml",
    )
    assert s.steps[0] == KubectlStep(
        ("get", "resourceclaims", "-o", "json"), output="json", capture={"RV": "metadata.resourceVersion"}
    )
    assert s.steps[1] == HttpStep("GET", "/api/v1/namespaces/${NS}", watch=True)
    for bad in (
        "scenarios: [{id: Bad_Id, steps: [{kubectl: get x}]}]",
        "scenarios: [{id: ok, steps: []}]",
        "scenarios: [{id: ok, steps: [{kubectl: get x, outptu: json}]}]",
        "scenarios: [{id: ok, steps: [{http: /no-method}]}]",
        "scenarios: [{id: ok, steps: [{curl: x}]}]",
    ):
        with pytest.raises(ScenarioError):
            parse(bad, tmp_path / "b.yaml")


def test_substitute_and_dig() -> None:
    assert substitute({"p": ["/x/${NS}/${A}"]}, {"NS": "n", "A": "1"}) == {"p": ["/x/n/1"]}
    with pytest.raises(ScenarioError):
        substitute("${MISSING}", {})
    doc = {"items": [{"metadata": {"name": "a"}}]}
    assert dig(doc, "items.0.metadata.name") == "a"
    assert dig(doc, "items.3.metadata") is None
