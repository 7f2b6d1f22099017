"""coordination.k8s.io/v1 Lease rules, as Kubernetes 1.37's pkg/apis/coordination/validation words them,
and the CoordinatedLeaderElection fields the Lease strategy drops while that gate is off (its 1.37 default)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.api.admission.gated_fields import drop_disabled_fields
from services.api.admission.validation import validate_create, validate_update
from services.api.types import registry
from services.kube.feature_gates import FeatureGates

from .objects import BAD_NAME, SUBDOMAIN_MSG, Obj, mutated, render

LEASES = registry.by_resource("coordination.k8s.io", "leases")
assert LEASES is not None

LEASE: Obj = {
    "apiVersion": "coordination.k8s.io/v1",
    "kind": "Lease",
    "metadata": {"name": "node-1", "namespace": "kube-node-lease", "resourceVersion": "1"},
    "spec": {"holderIdentity": "node-1", "leaseDurationSeconds": 40, "renewTime": "2026-12-02T04:01:09.739820Z"},
}

Change = Callable[[Obj], Any]


def spec(**values: Any) -> Change:
    return lambda o: o["spec"].update(values)


SPEC_CASES: list[tuple[str, Change, list[str]]] = [
    ("valid", lambda o: None, []),
    ("no spec fields at all", lambda o: o.update(spec={}), []),
    ("holder identity is free text", spec(holderIdentity="Any Holder/1"), []),
    (
        "zero duration",
        spec(leaseDurationSeconds=0),
        ["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"],
    ),
    (
        "negative duration",
        spec(leaseDurationSeconds=-1),
        ["spec.leaseDurationSeconds: Invalid value: -1: must be greater than 0"],
    ),
    ("zero transitions", spec(leaseTransitions=0), []),
    (
        "negative transitions",
        spec(leaseTransitions=-1),
        ["spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"],
    ),
    ("known strategy", spec(strategy="OldestEmulationVersion", preferredHolder="a"), []),
    ("prefixed strategy", spec(strategy="example.com/mine"), []),
    (
        # Kubernetes' path repeats "strategy".
        "unknown strategy",
        spec(strategy="Newest"),
        ['spec.strategy.strategy: Unsupported value: "Newest": supported values: "OldestEmulationVersion"'],
    ),
    (
        "preferred holder without a strategy",
        spec(preferredHolder="node-2"),
        ["spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"],
    ),
]
CASES = [
    *SPEC_CASES,
    (
        "bad name",
        lambda o: o["metadata"].update(name=BAD_NAME),
        [f'metadata.name: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
    ("no namespace", lambda o: o["metadata"].pop("namespace"), ["metadata.namespace: Required value"]),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_lease_create(change: Change, expected: list[str]) -> None:
    assert render(validate_create(LEASES, mutated(LEASE, change))) == expected


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in SPEC_CASES], ids=[c[0] for c in SPEC_CASES])
def test_lease_update_runs_the_spec_rules_again(change: Change, expected: list[str]) -> None:
    new = mutated(LEASE, change)
    assert render(validate_update(LEASES, new, mutated(new, lambda o: None))) == expected


@pytest.mark.parametrize(
    ("old_spec", "kept"),
    [
        (None, set()),  # create
        ({}, set()),  # an update may not introduce them
        ({"strategy": "OldestEmulationVersion"}, {"strategy"}),
        ({"strategy": "OldestEmulationVersion", "preferredHolder": "a"}, {"strategy", "preferredHolder"}),
    ],
)
def test_coordinated_leader_election_fields_dropped_unless_the_old_lease_had_them(
    old_spec: Obj | None, kept: set[str]
) -> None:
    new = mutated(LEASE, spec(strategy="OldestEmulationVersion", preferredHolder="a"))
    old = None if old_spec is None else mutated(LEASE, lambda o: o.update(spec=old_spec))
    drop_disabled_fields(LEASES, new, old, FeatureGates())
    assert {"strategy", "preferredHolder"} & set(new["spec"]) == kept
    assert new["spec"]["holderIdentity"] == "node-1"
