"""PodSchedulingContext rules (Kubernetes 1.31, classic DRA)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.api.admission.validation import validate_create, validate_status_update, validate_update

from .objects import BAD_NAME, PSC, SUBDOMAIN_MSG, Obj, mutated, render, scheduling_context

Change = Callable[[Obj], Any]


def nodes(n: int) -> list[str]:
    return [f"worker-{i}" for i in range(n)]


SPEC_CASES: list[tuple[str, Change, list[str]]] = [
    ("valid", lambda o: None, []),
    ("missing namespace", lambda o: o["metadata"].pop("namespace"), ["metadata.namespace: Required value"]),
    ("no potential nodes", lambda o: o["spec"].pop("potentialNodes"), []),
    ("128 potential nodes", lambda o: o["spec"].update(potentialNodes=nodes(128)), []),
    (
        "129 potential nodes",
        lambda o: o["spec"].update(potentialNodes=nodes(129)),
        ["spec.potentialNodes: Too long: may not be longer than 128"],
    ),
    (
        "bad potential node",
        lambda o: o["spec"].update(potentialNodes=["worker-1", BAD_NAME]),
        [f'spec.potentialNodes[1]: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
    (
        "duplicate potential node",
        lambda o: o["spec"].update(potentialNodes=["worker-1", "worker-1"]),
        ['spec.potentialNodes[1]: Duplicate value: "worker-1"'],
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in SPEC_CASES], ids=[c[0] for c in SPEC_CASES])
def test_create(change: Change, expected: list[str]) -> None:
    assert render(validate_create(PSC, mutated(scheduling_context(), change))) == expected


UPDATE_CASES = [c for c in SPEC_CASES if c[0] != "missing namespace"]  # the namespace cannot change


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in UPDATE_CASES], ids=[c[0] for c in UPDATE_CASES])
def test_update_revalidates_the_spec(change: Change, expected: list[str]) -> None:
    old = scheduling_context()
    assert render(validate_update(PSC, mutated(old, change), old)) == expected


def claims(*entries: Obj) -> Change:
    return lambda o: o["status"].update(resourceClaims=list(entries))


STATUS_CASES: list[tuple[str, Change, list[str]]] = [
    ("valid", lambda o: None, []),
    ("several claims", claims({"name": "a", "unsuitableNodes": nodes(128)}, {"name": "b"}), []),
    ("duplicate claim", claims({"name": "a"}, {"name": "a"}), ['status.claims[1]: Duplicate value: "a"']),
    (
        "129 unsuitable nodes",
        claims({"name": "a", "unsuitableNodes": nodes(129)}),
        ["status.claims[0].unsuitableNodes: Too long: may not be longer than 128"],
    ),
    (
        "bad unsuitable node",
        claims({"name": "a", "unsuitableNodes": [BAD_NAME]}),
        [f'status.claims[0].unsuitableNodes[0]: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
    (
        "duplicate unsuitable node",
        claims({"name": "a", "unsuitableNodes": ["n", "n"]}),
        ['status.claims[0].unsuitableNodes[1]: Duplicate value: "n"'],
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in STATUS_CASES], ids=[c[0] for c in STATUS_CASES])
def test_status_update(change: Change, expected: list[str]) -> None:
    old = scheduling_context()
    assert render(validate_status_update(PSC, mutated(old, change), old)) == expected
