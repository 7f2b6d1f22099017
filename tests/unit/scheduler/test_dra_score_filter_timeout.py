"""DynamicResources' Score (prioritized lists) and Filter timeout, after kube 1.37's dynamicresources_test.go.

Case names are upstream's: ``Test_computesScore``, ``TestNormalizeScore`` and
TestPlugin's ``*-prioritized-list-scoring``, ``timeout``, ``timeout_disabled``
and ``timeout_zero``. The plugin runs PreFilter, Filter per node, PreScore,
Score and NormalizeScore as the framework calls them; scores and messages are
upstream's expectations. The Filter timeout is measured on a fake clock that
moves one second per reading, so a 1 ns limit has always run out when the
allocator first asks (upstream uses a 1 ns real timeout).
"""

from __future__ import annotations

from typing import Any

import pytest

from services.kube.feature_gates import FeatureGates
from services.kube.structured import Features
from services.scheduler.dra.assume_cache import ClaimAssumeCache
from services.scheduler.dra.score import ScoreError, compute_score
from services.scheduler.dra.stores import ObjectStore
from services.scheduler.framework import CycleState, NodeScore
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins import names
from services.scheduler.plugins.dynamic_resources import DynamicResources
from services.scheduler.plugins.dynamic_resources_args import PluginArgsError, filter_timeout
from services.scheduler.profile import DEFAULT_SCORE_WEIGHTS
from services.scheduler.status import Code

from .builders import make_node
from .dra_fixtures import (
    CLAIM_NAME,
    CLAIM_NAME2,
    CLASS_NAME,
    DEVICE_CLASS,
    DRIVER,
    NODE2_NAME,
    NODE_NAME,
    POD_WITH_CLAIM_NAME,
    POD_WITH_TWO_CLAIM_NAMES,
    make_claim,
    no_sleep,
    owned,
    resource_slice,
)
from .fake_client import FakeClient

Obj = dict[str, Any]
GATES = FeatureGates(release="1.37")
NODE3_NAME = "worker-3"
ATTR = "healthy"


# -- Test_computesScore --------------------------------------------------------------------


def sub(name: str, count: int = 1, *, selector: str = "") -> Obj:
    out: Obj = {"name": name, "deviceClassName": CLASS_NAME, "allocationMode": "ExactCount", "count": count}
    if selector:
        out["selectors"] = [{"cel": {"expression": selector}}]
    return out


def prioritized(name: str, *subs: Obj) -> Obj:
    return {"name": name, "firstAvailable": list(subs)}


def claim_with(*requests: Obj, name: str = CLAIM_NAME) -> Obj:
    claim = make_claim(name)
    claim["spec"]["devices"]["requests"] = list(requests)
    return claim


def subreqs(n: int) -> list[Obj]:
    return [sub(f"subreq-{i}") for i in range(1, n + 1)]


def results(*requests: str) -> Obj:
    return {"devices": {"results": [{"request": r} for r in requests]}}


ALLOCATED_CLAIM = {
    **make_claim(),
    "status": {"allocation": {"devices": {"results": [{"request": "req-1", "device": "instance-1"}]}}},
}

COMPUTE_SCORE_CASES: dict[str, tuple[list[Obj], list[Obj], int | None]] = {
    "more-claims-than-allocations": (
        [claim_with(prioritized("req-1", sub("subreq-1"))), claim_with(prioritized("req-2", sub("subreq-1")))],
        [],
        None,
    ),
    "mix-of-allocated-and-unallocated-claims": (
        [ALLOCATED_CLAIM, make_claim(CLAIM_NAME2)],
        [results("req-1")],
        0,
    ),
    "single-request-only-subrequest-allocated": (
        [claim_with(prioritized("req-1", sub("subreq-1")))],
        [results("req-1/subreq-1")],
        8,
    ),
    "single-request-last-subrequest-allocated": (
        [claim_with(prioritized("req-1", *subreqs(8)))],
        [results("req-1/subreq-8")],
        1,
    ),
    "multiple-requests-with-middle-subrequests-allocated": (
        [claim_with(prioritized("req-1", *subreqs(4)), prioritized("req-2", *subreqs(5)))],
        [results("req-1/subreq-4", "req-2/subreq-5")],
        9,
    ),
    "multiple-requests-with-top-subrequests-allocated": (
        [claim_with(prioritized("req-1", *subreqs(8)), prioritized("req-2", sub("subreq-1")))],
        [results("req-1/subreq-8", "req-2/subreq-1")],
        9,
    ),
    "multiple-claims-with-last-subrequests-allocated": (
        [claim_with(prioritized("req-1", *subreqs(8))), claim_with(prioritized("req-2", *subreqs(8)))],
        [results("req-1/subreq-8"), results("req-2/subreq-8")],
        2,
    ),
    "multiple-claims-with-top-subrequests-allocated": (
        [claim_with(prioritized("req-1", sub("subreq-1"))), claim_with(prioritized("req-2", sub("subreq-1")))],
        [results("req-1/subreq-1"), results("req-2/subreq-1")],
        16,
    ),
}


@pytest.mark.parametrize("case", COMPUTE_SCORE_CASES, ids=list(COMPUTE_SCORE_CASES))
def test_computes_score(case: str) -> None:
    claims, allocations, expected = COMPUTE_SCORE_CASES[case]
    if expected is None:
        with pytest.raises(ScoreError, match="number of allocations 0 is smaller than number of claims"):
            compute_score(claims, allocations)
        return
    assert compute_score(claims, allocations) == expected


def test_compute_score_skips_claims_that_are_not_allocated_here() -> None:
    """A classic claim waiting for its driver has no allocation from Filter and takes none of the results."""
    claims = [make_claim(CLAIM_NAME2), claim_with(prioritized("req-1", sub("subreq-1")))]
    assert compute_score(claims, [results("req-1/subreq-1")], to_allocate=[False, True]) == 8


# -- TestNormalizeScore --------------------------------------------------------------------

MAX_INT32 = 2**31 - 1
NORMALIZE_CASES: dict[str, tuple[list[int], list[int]]] = {
    "empty": ([], []),
    "single-score": ([42], [100]),
    "all-same": ([8, 8], [100, 100]),
    "all-same-very-large": ([MAX_INT32, MAX_INT32], [100, 100]),
    "max-and-min-values": ([MAX_INT32, 0], [100, 0]),
    "mid-value": ([99, 98, 97], [100, 98, 97]),
    "large-spread-lost-precision": ([MAX_INT32, MAX_INT32 - 1, 1, 0], [100, 99, 0, 0]),
}


def plugin(*, slices: list[Obj], claims: list[Obj], **kwargs: Any) -> DynamicResources:
    cache = ClaimAssumeCache()
    client = FakeClient()
    for claim in claims:
        cache.on_add(client.put("resourceclaims", claim))
    kwargs.setdefault("features", Features.from_gates(GATES))
    return DynamicResources(
        client=client,
        classes=ObjectStore([DEVICE_CLASS]),
        slices=ObjectStore(slices),
        claims=cache,
        conflict_retry_delays=(0.0,) * 4,
        sleep=no_sleep,
        **kwargs,
    )


@pytest.mark.parametrize("case", NORMALIZE_CASES, ids=list(NORMALIZE_CASES))
def test_normalize_score(case: str) -> None:
    raw, expected = NORMALIZE_CASES[case]
    scores = [NodeScore(f"node-{i}", v) for i, v in enumerate(raw, 1)]
    assert plugin(slices=[], claims=[]).normalize_score(CycleState(), POD_WITH_CLAIM_NAME, scores) is None
    assert [s.score for s in scores] == expected


def test_score_weight_is_upstreams() -> None:
    assert DEFAULT_SCORE_WEIGHTS[names.DYNAMIC_RESOURCES] == 2


# -- TestPlugin: *-prioritized-list-scoring ------------------------------------------------


def node(name: str) -> Obj:
    return make_node(name, labels={"kubernetes.io/hostname": name})


def attr_slice(node_name: str, healthy: bool) -> Obj:
    slice_ = resource_slice(node_name, "instance-1")
    slice_["spec"]["devices"][0]["basic"] = {"attributes": {ATTR: {"bool": healthy}}}
    return slice_


def run_scores(dra: DynamicResources, pod: Obj, nodes: list[str]) -> tuple[dict[str, Any], dict[str, int]]:
    """PreFilter, Filter per node, PreScore, Score, NormalizeScore: (filter statuses, normalized scores)."""
    state = CycleState()
    infos = [NodeInfo(node(n)) for n in nodes]
    _, status = dra.pre_filter(state, pod, infos)
    assert status is None
    filtered = {info.name: dra.filter(state, pod, info) for info in infos}
    feasible = [info for info in infos if filtered[info.name] is None]
    assert dra.pre_score(state, pod, feasible) is None  # not skipped: there are subrequests to rank
    raw = []
    for info in feasible:
        value, status = dra.score(state, pod, info)
        assert status is None
        raw.append(NodeScore(info.name, value))
    raw_by_node = {s.name: s.score for s in raw}
    assert dra.normalize_score(state, pod, raw) is None
    return {"filter": filtered, "raw": raw_by_node}, {s.name: s.score for s in raw}


def test_single_claim_prioritized_list_scoring() -> None:
    claim = owned(
        claim_with(
            prioritized("req-1", sub("subreq-1", selector=f'device.attributes["{DRIVER}"].{ATTR}'), sub("subreq-2"))
        )
    )
    dra = plugin(slices=[attr_slice(NODE_NAME, True), attr_slice(NODE2_NAME, False)], claims=[claim])
    seen, normalized = run_scores(dra, POD_WITH_CLAIM_NAME, [NODE_NAME, NODE2_NAME])
    assert seen["raw"] == {NODE_NAME: 8, NODE2_NAME: 7}
    assert normalized == {NODE_NAME: 100, NODE2_NAME: 87}


def test_multiple_claims_prioritized_list_scoring() -> None:
    first = owned(claim_with(prioritized("req-1", sub("subreq-1"))))
    second = owned(
        claim_with(
            prioritized("req-1", sub("subreq-1", 4), sub("subreq-2", 3), sub("subreq-3", 2), sub("subreq-4", 1)),
            name=CLAIM_NAME2,
        )
    )
    slices = [
        resource_slice(NODE_NAME, "instance-1", "instance-2", "instance-3", "instance-4"),
        resource_slice(NODE2_NAME, "instance-1", "instance-2"),
        resource_slice(NODE3_NAME, "instance-1"),
    ]
    dra = plugin(slices=slices, claims=[first, second])
    seen, normalized = run_scores(dra, POD_WITH_TWO_CLAIM_NAMES, [NODE_NAME, NODE2_NAME, NODE3_NAME])
    third = seen["filter"][NODE3_NAME]
    assert (third.code, third.message()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")
    assert seen["raw"] == {NODE_NAME: 15, NODE2_NAME: 13}
    assert normalized == {NODE_NAME: 100, NODE2_NAME: 86}


def test_multiple_requests_prioritized_list_scoring() -> None:
    claim = owned(
        claim_with(
            prioritized("req-1", sub("subreq-1", 2), sub("subreq-2", 1)),
            prioritized("req-2", sub("subreq-1", 2), sub("subreq-2", 1)),
        )
    )
    slices = [
        resource_slice(NODE_NAME, "instance-1", "instance-2", "instance-3", "instance-4"),
        resource_slice(NODE2_NAME, "instance-1", "instance-2", "instance-3"),
        resource_slice(NODE3_NAME, "instance-1", "instance-2"),
    ]
    dra = plugin(slices=slices, claims=[claim])
    seen, normalized = run_scores(dra, POD_WITH_CLAIM_NAME, [NODE_NAME, NODE2_NAME, NODE3_NAME])
    assert seen["raw"] == {NODE_NAME: 16, NODE2_NAME: 15, NODE3_NAME: 14}
    assert normalized == {NODE_NAME: 100, NODE2_NAME: 93, NODE3_NAME: 87}


def test_score_is_skipped_without_subrequests_and_zero_without_the_gate() -> None:
    """Plain requests give every node the same score: PreScore skips Score (same outcome, less work)."""
    claim = owned(make_claim())
    dra = plugin(slices=[resource_slice(NODE_NAME, "instance-1")], claims=[claim])
    state = CycleState()
    info = NodeInfo(node(NODE_NAME))
    dra.pre_filter(state, POD_WITH_CLAIM_NAME, [info])
    assert dra.filter(state, POD_WITH_CLAIM_NAME, info) is None
    status = dra.pre_score(state, POD_WITH_CLAIM_NAME, [info])
    assert status is not None and status.code == Code.SKIP

    listed = owned(claim_with(prioritized("req-1", sub("subreq-1"))))
    off = plugin(slices=[resource_slice(NODE_NAME, "instance-1")], claims=[listed], features=Features())
    assert off.score(CycleState(), POD_WITH_CLAIM_NAME, info) == (0, None)  # !EnableDRAPrioritizedList


# -- TestPlugin: timeout, timeout_disabled, timeout_zero ------------------------------------


class SteppingClock:
    """One second later at every reading."""

    def __init__(self) -> None:
        self.now = 0.0
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        self.now += 1.0
        return self.now


LARGE_CLAIM = owned(
    claim_with(*({"name": f"req-{i}", "deviceClassName": CLASS_NAME} for i in range(1, 6)))
)  # five requests, four devices: a search that fails after trying every combination


def filter_once(dra: DynamicResources, claim: Obj) -> Any:
    state = CycleState()
    info = NodeInfo(node(NODE_NAME))
    _, status = dra.pre_filter(state, POD_WITH_CLAIM_NAME, [info])
    assert status is None
    return dra.filter(state, POD_WITH_CLAIM_NAME, info)


LARGE_SLICE = resource_slice(NODE_NAME, "instance-1", "instance-2", "instance-3", "instance-4")


def test_timeout() -> None:
    """Timeouts return Error so the pod retries via backoff, not UnschedulableAndUnresolvable."""
    clock = SteppingClock()
    dra = plugin(slices=[LARGE_SLICE], claims=[LARGE_CLAIM], filter_timeout=1e-9, clock=clock)
    status = filter_once(dra, LARGE_CLAIM)
    assert status is not None
    assert (status.code, status.message()) == (Code.ERROR, f"node {NODE_NAME}: timed out trying to allocate devices")
    assert len(dra.memo) == 0  # a timed-out search is no outcome to remember


def test_timeout_does_not_stop_a_search_within_the_limit() -> None:
    clock = SteppingClock()
    dra = plugin(slices=[LARGE_SLICE], claims=[LARGE_CLAIM], filter_timeout=10_000.0, clock=clock)
    status = filter_once(dra, LARGE_CLAIM)
    assert (status.code, status.message()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")
    assert clock.readings > 1  # the allocator did ask


@pytest.mark.parametrize("timeout", [None, 0.0], ids=["timeout_disabled", "timeout_zero"])
def test_timeout_disabled_or_zero(timeout: float | None) -> None:
    clock = SteppingClock()
    pending = owned(make_claim())
    dra = plugin(
        slices=[resource_slice(NODE_NAME, "instance-1")], claims=[pending], filter_timeout=timeout, clock=clock
    )
    assert filter_once(dra, pending) is None
    assert clock.readings == 0


# -- DynamicResourcesArgs.filterTimeout ----------------------------------------------------


def test_filter_timeout_args_default_and_validation() -> None:
    assert filter_timeout(GATES, None) == 10.0
    assert filter_timeout(GATES, 0.0) is None
    assert filter_timeout(GATES, 2.5) == 2.5
    with pytest.raises(PluginArgsError, match=r'^filterTimeout: Invalid value: "-1s": must be zero or positive$'):
        filter_timeout(GATES, -1.0)
    with pytest.raises(PluginArgsError, match=r'Invalid value: "-500ms"'):  # Go's Duration.String, JSON-quoted
        filter_timeout(GATES, -0.5)
    off = FeatureGates.parse("DRASchedulerFilterTimeout=false", release="1.37")
    assert filter_timeout(off, None) is None
    with pytest.raises(
        PluginArgsError, match=r"^filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled$"
    ):
        filter_timeout(off, 1.0)
    assert filter_timeout(FeatureGates(release="1.31"), None) is None  # 1.31: the gate does not exist


# -- reservedFor: 1.37 leaves the 256 limit to validation ------------------------------------


def reserved_for(count: int) -> Obj:
    claim = owned(make_claim(), pod_uid="someone-else")
    claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    claim["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "req-1", "driver": DRIVER, "pool": NODE_NAME, "device": "instance-1"}]}
        },
        "reservedFor": [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(count)],
    }
    del claim["metadata"]["ownerReferences"]
    return claim


@pytest.mark.parametrize(
    ("features", "consumers", "refused"),
    [
        (Features(), 31, False),
        (Features(), 32, True),  # 1.31: draplane checks validation's limit ahead, "resourceclaim in use"
        (Features.from_gates(GATES), 256, False),  # 1.37: CanBeReserved is true; the write meets the limit
    ],
    ids=["1.31-31", "1.31-32", "1.37-256"],
)
def test_prefilter_reservation_limit(features: Features, consumers: int, refused: bool) -> None:
    claim = reserved_for(consumers)
    dra = plugin(slices=[resource_slice(NODE_NAME, "instance-1")], claims=[claim], features=features)
    _, status = dra.pre_filter(CycleState(), POD_WITH_CLAIM_NAME, [NodeInfo(node(NODE_NAME))])
    if refused:
        assert status is not None
        assert (status.code, status.message()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim in use")
    else:
        assert status is None
