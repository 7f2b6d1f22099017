"""NodeResourcesFit and BalancedAllocation: fit, scoring and hint tables (mirrors fit_test.go)."""

from __future__ import annotations

from typing import Any

import pytest

from services.scheduler.cluster_events import NODE_ADD
from services.scheduler.framework import CycleState, QueueingHint
from services.scheduler.node_info import NodeInfo
from services.scheduler.plugins.balanced_allocation import BalancedAllocation
from services.scheduler.plugins.node_resources_fit import MOST_ALLOCATED, NodeResourcesFit
from services.scheduler.plugins.resource_allocation import ResourceSpec
from services.scheduler.queueing_hints import QueueingHintFunction, run_hint
from services.scheduler.resources import pod_requests
from services.scheduler.status import Code, new_status

from .builders import container, make_node, make_pod

EXTENDED = "example.com/foo"


def pod_with(
    cpu: str,
    mem: str,
    *inits: tuple[str, str],
    sidecars: tuple[tuple[str, str], ...] = (),
    overhead: dict[str, str] | None = None,
    extra: dict[str, str] | None = None,
) -> dict[str, Any]:
    requests: dict[str, str] = {}
    if cpu:
        requests["cpu"] = cpu
    if mem:
        requests["memory"] = mem
    requests.update(extra or {})
    init = [container(f"i{i}", requests={"cpu": c, "memory": m}) for i, (c, m) in enumerate(inits)]
    init += [
        container(f"s{i}", requests={"cpu": c, "memory": m}, restart_policy="Always")
        for i, (c, m) in enumerate(sidecars)
    ]
    return make_pod(
        f"p-{cpu}-{mem}", containers=[container(requests=requests)], init_containers=init or None, overhead=overhead
    )


def node_info(existing_cpu: str, existing_mem: str, *, pods: int = 32, extended: int = 5) -> NodeInfo:
    node = make_node("machine1", allocatable={"cpu": "10m", "memory": "20", "pods": str(pods), EXTENDED: str(extended)})
    info = NodeInfo(node)
    if existing_cpu or existing_mem:
        info.add_pod(
            make_pod(
                "existing",
                uid="existing",
                node_name="machine1",
                containers=[container(requests={"cpu": existing_cpu, "memory": existing_mem})],
            )
        )
    return info


def insufficient(*reasons: str) -> Any:
    return new_status(Code.UNSCHEDULABLE, *reasons)


FIT_CASES = [
    ("no resources requested always fits", make_pod(), node_info("10m", "20"), None),
    (
        "too many resources fails",
        pod_with("1m", "1"),
        node_info("10m", "20"),
        insufficient("Insufficient cpu", "Insufficient memory"),
    ),
    (
        "too many resources fails due to init container cpu",
        pod_with("1m", "1", ("3m", "1")),
        node_info("8m", "19"),
        insufficient("Insufficient cpu"),
    ),
    (
        "too many resources fails due to highest init container cpu",
        pod_with("1m", "1", ("3m", "1"), ("2m", "1")),
        node_info("8m", "19"),
        insufficient("Insufficient cpu"),
    ),
    (
        "too many resources fails due to init container memory",
        pod_with("1m", "1", ("1m", "3")),
        node_info("9m", "19"),
        insufficient("Insufficient memory"),
    ),
    (
        "too many resources fails due to highest init container memory",
        pod_with("1m", "1", ("1m", "3"), ("1m", "2")),
        node_info("9m", "19"),
        insufficient("Insufficient memory"),
    ),
    (
        "init container fits because it's the max, not sum, of containers and init containers",
        pod_with("1m", "1", ("1m", "1")),
        node_info("9m", "19"),
        None,
    ),
    (
        "multiple init containers fit because it's the max, not sum, of containers and init containers",
        pod_with("1m", "1", ("1m", "1"), ("1m", "1")),
        node_info("9m", "19"),
        None,
    ),
    ("both resources fit", pod_with("1m", "1"), node_info("5m", "5"), None),
    ("one resource memory fits", pod_with("2m", "1"), node_info("9m", "5"), insufficient("Insufficient cpu")),
    ("one resource cpu fits", pod_with("1m", "2"), node_info("5m", "19"), insufficient("Insufficient memory")),
    ("equal edge case", pod_with("5m", "1"), node_info("5m", "19"), None),
    ("equal edge case for init container", pod_with("4m", "1", ("5m", "1")), node_info("5m", "19"), None),
    ("extended resource fits", pod_with("1m", "1", extra={EXTENDED: "1"}), node_info("0m", "0"), None),
    (
        "extended resource capacity enforced",
        pod_with("1m", "1", extra={EXTENDED: "6"}),
        node_info("0m", "0"),
        insufficient(f"Insufficient {EXTENDED}"),
    ),
    (
        "extended resource not on node",
        pod_with("", "", extra={"example.com/bar": "1"}),
        node_info("", ""),
        insufficient("Insufficient example.com/bar"),
    ),
    ("too many pods", make_pod(), node_info("1m", "1", pods=1), insufficient("Too many pods")),
    (
        "too many pods and insufficient cpu are both reported",
        pod_with("10m", "1"),
        node_info("1m", "1", pods=1),
        insufficient("Too many pods", "Insufficient cpu"),
    ),
    (
        "restartable init containers add up with the containers",
        pod_with("1m", "1", sidecars=(("5m", "1"),)),
        node_info("5m", "5"),
        insufficient("Insufficient cpu"),
    ),
    (
        "pod overhead is added",
        pod_with("1m", "1", overhead={"cpu": "4m", "memory": "15"}),
        node_info("5m", "5"),
        insufficient("Insufficient memory"),
    ),
    (
        "limits without requests count as requests",
        make_pod(containers=[container(limits={"cpu": "6m"})]),
        node_info("5m", "5"),
        insufficient("Insufficient cpu"),
    ),
]


@pytest.mark.parametrize(("pod", "info", "want"), [pytest.param(*c[1:], id=c[0]) for c in FIT_CASES])
def test_filter(pod: dict[str, Any], info: NodeInfo, want: Any) -> None:
    plugin = NodeResourcesFit()
    state = CycleState()
    assert plugin.pre_filter(state, pod, []) == (None, None)
    assert plugin.filter(state, pod, info) == want


def test_filter_without_pre_filter_state_is_an_error() -> None:
    status = NodeResourcesFit().filter(CycleState(), make_pod(), node_info("", ""))
    assert status is not None and status.code == Code.ERROR


def test_pod_requests_with_sidecars() -> None:
    """KEP-753: InitContainerUse(i) = sum(restartable before i) + init i; total = max(that, containers + sidecars)."""
    pod = make_pod(
        containers=[container(requests={"cpu": "1"})],
        init_containers=[
            container("s1", requests={"cpu": "2"}, restart_policy="Always"),
            container("i1", requests={"cpu": "5"}),
            container("s2", requests={"cpu": "1"}, restart_policy="Always"),
        ],
    )
    # containers + sidecars = 1 + 2 + 1 = 4; init i1 needs 2 + 5 = 7.
    assert pod_requests(pod)["cpu"] == 7


def scoring_node(name: str, cpu_milli: int, memory: int) -> dict[str, Any]:
    return make_node(name, allocatable={"cpu": f"{cpu_milli}m", "memory": str(memory), "pods": "110"})


def scored(plugin: Any, pod: dict[str, Any], infos: list[NodeInfo]) -> list[int]:
    state = CycleState()
    assert plugin.pre_score(state, pod, infos) is None
    out = []
    for info in infos:
        value, status = plugin.score(state, pod, info)
        assert status is None
        out.append(value)
    return out


TWO_CONTAINERS = make_pod(
    containers=[
        container(requests={"cpu": "1000m", "memory": "2000"}),
        container("c2", requests={"cpu": "2000m", "memory": "3000"}),
    ]
)


@pytest.mark.parametrize(
    ("name", "pod", "nodes", "existing", "want"),
    [
        # (4000-0)*100/4000 = 100, (10000-0)*100/10000 = 100
        (
            "nothing scheduled, nothing requested",
            make_pod(containers=[]),
            [scoring_node("node1", 4000, 10000), scoring_node("node2", 4000, 10000)],
            [],
            [100, 100],
        ),
        # node1: cpu (4000-3000)/4000 = 25, mem (10000-5000)/10000 = 50 -> 37; node2: 50, 50 -> 50
        (
            "nothing scheduled, resources requested, differently sized nodes",
            TWO_CONTAINERS,
            [scoring_node("node1", 4000, 10000), scoring_node("node2", 6000, 10000)],
            [],
            [37, 50],
        ),
        # node1 holds 3000m/5000 already: cpu 6000 > 4000 -> 0, mem 10000/10000 -> 0; node2: 70, 75 -> 72
        (
            "resources requested with more than the node, existing pods",
            TWO_CONTAINERS,
            [scoring_node("node1", 4000, 10000), scoring_node("node2", 10000, 20000)],
            [("node1", "3000m", "5000")],
            [0, 72],
        ),
        # pods without requests count as 100m / 200Mi: cpu 90, memory (1024-200)/1024 -> 80; (90+80)/2 = 85
        (
            "zero requests count as the non-zero defaults",
            make_pod(),
            [scoring_node("node1", 1000, 1024 * 1024 * 1024)],
            [],
            [85],
        ),
    ],
)
def test_least_allocated_score(name: str, pod: Any, nodes: Any, existing: Any, want: list[int]) -> None:
    infos = {n["metadata"]["name"]: NodeInfo(n) for n in nodes}
    for node, cpu, mem in existing:
        infos[node].add_pod(
            make_pod("e", uid=f"e-{node}", node_name=node, containers=[container(requests={"cpu": cpu, "memory": mem})])
        )
    assert scored(NodeResourcesFit(), pod, list(infos.values())) == want


def test_most_allocated_and_weights() -> None:
    # cpu 3000/4000 = 75, mem 5000/10000 = 50; weights cpu 1, memory 3 -> (75 + 150) / 4 = 56
    plugin = NodeResourcesFit(
        scoring_strategy=MOST_ALLOCATED, resources=(ResourceSpec("cpu", 1), ResourceSpec("memory", 3))
    )
    assert scored(plugin, TWO_CONTAINERS, [NodeInfo(scoring_node("node1", 4000, 10000))]) == [56]


def test_unknown_strategy_is_rejected() -> None:
    with pytest.raises(ValueError, match="not supported"):
        NodeResourcesFit(scoring_strategy="RequestedToCapacityRatio")


@pytest.mark.parametrize(
    ("name", "pod", "nodes", "existing", "want"),
    [
        (
            "nothing scheduled, nothing requested",
            make_pod(containers=[]),
            [scoring_node("node1", 4000, 10000), scoring_node("node2", 4000, 10000)],
            [],
            [100, 100],
        ),
        # node1: cpu 3000/4000 = .75, mem 5000/10000 = .5, std .125 -> 87; node2: .5/.5 -> 100
        (
            "nothing scheduled, resources requested, differently sized nodes",
            TWO_CONTAINERS,
            [scoring_node("node1", 4000, 10000), scoring_node("node2", 6000, 10000)],
            [],
            [87, 100],
        ),
        # node1: cpu 6000/10000 = .6, mem 15000/20000 = .75 -> std .075 -> 92
        (
            "resources requested, pods scheduled with resources",
            TWO_CONTAINERS,
            [scoring_node("node1", 10000, 20000)],
            [("node1", "3000m", "10000")],
            [92],
        ),
        # fractions above 1 are capped: cpu 1, mem .25 -> std .375 -> 62
        ("requested resources at node capacity", TWO_CONTAINERS, [scoring_node("node1", 3000, 20000)], [], [62]),
    ],
)
def test_balanced_allocation_score(name: str, pod: Any, nodes: Any, existing: Any, want: list[int]) -> None:
    infos = {n["metadata"]["name"]: NodeInfo(n) for n in nodes}
    for node, cpu, mem in existing:
        infos[node].add_pod(
            make_pod("e", uid=f"e-{node}", node_name=node, containers=[container(requests={"cpu": cpu, "memory": mem})])
        )
    assert scored(BalancedAllocation(), pod, list(infos.values())) == want


def alloc_node(cpu: str, mem: str = "100", pods: str = "10") -> dict[str, Any]:
    return make_node("n", allocatable={"cpu": cpu, "memory": mem, "pods": pods})


REQ_POD = make_pod(containers=[container(requests={"cpu": "1", "memory": "10"})])


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, {"kind": "Pod"}, QueueingHint.QUEUE, id="backoff-wrong-new-object"),
        pytest.param(None, alloc_node("2"), QueueingHint.QUEUE, id="queue-on-node-add-with-enough-resources"),
        pytest.param(
            None, alloc_node("500m"), QueueingHint.QUEUE_SKIP, id="skip-queue-on-node-add-without-enough-resources"
        ),
        pytest.param(
            alloc_node("2"),
            alloc_node("500m"),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-node-changes-from-suitable-to-unsuitable",
        ),
        pytest.param(
            alloc_node("500m"),
            alloc_node("2"),
            QueueingHint.QUEUE,
            id="queue-on-node-changes-from-unsuitable-to-suitable",
        ),
        pytest.param(
            alloc_node("2", pods="1"),
            alloc_node("2", pods="2"),
            QueueingHint.QUEUE,
            id="queue-on-node-allowed-pod-number-increase",
        ),
        pytest.param(
            alloc_node("2", mem="100"),
            alloc_node("2", mem="200"),
            QueueingHint.QUEUE,
            id="queue-on-node-memory-increase",
        ),
        pytest.param(
            alloc_node("2"),
            alloc_node("2", mem="100"),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-node-changes-without-resource-increase",
        ),
    ],
)
def test_is_schedulable_after_node_change(old: Any, new: Any, want: QueueingHint) -> None:
    plugin = NodeResourcesFit()
    fn = QueueingHintFunction(plugin.name, plugin.is_schedulable_after_node_change)
    assert run_hint(fn, REQ_POD, old, new, NODE_ADD) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(make_pod("o", node_name="n"), None, QueueingHint.QUEUE, id="queue-on-deleted-scheduled-pod"),
        pytest.param(make_pod("o"), None, QueueingHint.QUEUE_SKIP, id="skip-queue-on-unscheduled-pod-deleted"),
        pytest.param(
            make_pod("o", node_name="n"),
            make_pod("o", node_name="n"),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-pod-update-without-in-place-resize",
        ),
    ],
)
def test_is_schedulable_after_pod_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert NodeResourcesFit().is_schedulable_after_pod_change(REQ_POD, old, new) == want
