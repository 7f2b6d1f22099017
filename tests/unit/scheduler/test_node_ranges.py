"""Rejected nodes as range expressions in decision records (`node_ranges`, `rejections`)."""

from __future__ import annotations

import logging
import random

import orjson
import pytest

from services.scheduler import node_ranges, rejections
from services.scheduler.node_ranges import BadExpression, compact, expand
from services.scheduler.status import Code, new_status

FULL = new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims").with_plugin("DynamicResources")
CPU = new_status(Code.UNSCHEDULABLE, "Insufficient cpu").with_plugin("NodeResourcesFit")


def numbered(numbers: list[int] | range, prefix: str = "scheduler-perf-dra-", width: int = 4) -> list[str]:
    return sorted(f"{prefix}{n:0{width}d}" for n in numbers)


def test_numbered_nodes_become_one_expression() -> None:
    names = numbered([n for n in range(500) if n != 498])
    assert compact(names) == "scheduler-perf-dra-[0000-0497,0499]"
    assert list(expand("scheduler-perf-dra-[0000-0497,0499]")) == names


def test_every_digit_goes_in_the_brackets() -> None:
    assert compact(numbered(range(98, 110), prefix="node-")) == "node-[0098-0109]"
    assert compact([f"10.0.0.{n}" for n in range(100, 120)]) == "10.0.0.[100-119]"


def test_any_set_of_numbered_names_round_trips() -> None:
    rng = random.Random(7)
    compacted = 0
    for _ in range(300):
        width = rng.choice([1, 2, 3, 4])
        start = rng.randrange(10**width)
        span = list(range(start, min(10**width, start + rng.randint(1, 300))))
        chosen = [n for n in span if rng.random() > rng.choice([0.0, 0.02, 0.1, 0.5])]  # runs with holes, or sparse
        names = numbered(chosen, prefix=rng.choice(["n-", "gpu-node-", "pool7-", ""]), width=width)
        expression = compact(names)
        if expression is not None:
            compacted += 1
            assert list(expand(expression)) == names
    assert compacted > 50  # the round trip was tried, not only the fall-back


@pytest.mark.parametrize(
    "names",
    [
        ["n-10", "n-100", "n-11", "n-12", "n-13", "n-14", "n-2", "n-30"],  # lengths differ: string order is not numeric
        ["n-0000", "n-0001", "n-00a0", "n-0003", "n-0004", "n-0005", "n-0006", "n-0007"],  # not all digits
        ["n-0000", "n-0001", "n-000-", "n-0003", "n-0004", "n-0005", "n-0006", "n-0007"],
        ["a-1", "a-2", "a-3"],  # too few to be worth it
        numbered(range(0, 40, 2)),  # a run per name
        ["gpu-a", "gpu-b", "gpu-c", "gpu-d", "gpu-e", "gpu-f", "gpu-g", "gpu-h"],
    ],
)
def test_names_that_are_not_worth_it_or_not_numbered_are_listed(names: list[str]) -> None:
    assert compact(sorted(names)) is None


def test_a_plain_name_expands_to_itself() -> None:
    assert list(expand("node-1")) == ["node-1"]


@pytest.mark.parametrize(
    "expression", ["n-[5-3]", "n-[a-b]", "n-[01-2]", "n-[1,]", "n-[]", "n-[\uff11-\uff12]", "n-[0-9999999999]"]
)
def test_a_bad_expression_is_refused(expression: str) -> None:
    with pytest.raises(BadExpression):
        list(expand(expression))


def test_a_scheduled_pods_passed_over_nodes_are_a_few_bytes_and_read_back_node_by_node() -> None:
    statuses = dict.fromkeys(numbered([n for n in range(500) if n != 123]), FULL)
    encoded = rejections.encode(statuses)
    assert encoded == [
        {
            "plugin": "DynamicResources",
            "code": "UnschedulableAndUnresolvable",
            "reasons": ["cannot allocate all claims"],
            "nodes": [],
            rejections.RANGES: ["scheduler-perf-dra-[0000-0122,0124-0499]"],
        }
    ]
    assert len(orjson.dumps(encoded)) < 200  # listed, the names alone are 13 KB
    record = {"result": "scheduled", rejections.KEY: encoded}
    assert rejections.by_node(record) == {
        node: {"plugin": "DynamicResources", "code": "UnschedulableAndUnresolvable", "reasons": list(FULL.reasons)}
        for node in statuses
    }
    [(plugin, _, _, nodes)] = rejections.groups(record)
    assert plugin == "DynamicResources" and nodes == list(statuses)


def test_groups_of_several_verdicts_each_get_their_form() -> None:
    statuses = {**dict.fromkeys(numbered(range(20)), FULL), "cpu-node": CPU, "other-node": CPU}
    encoded = rejections.encode(statuses)
    assert [(g["plugin"], g["nodes"], g.get(rejections.RANGES)) for g in encoded] == [
        ("DynamicResources", [], ["scheduler-perf-dra-[0000-0019]"]),
        ("NodeResourcesFit", ["cpu-node", "other-node"], None),
    ]
    assert set(rejections.by_node({rejections.KEY: encoded})) == set(statuses)


def test_a_bad_expression_in_a_record_is_logged_and_left_out(caplog: pytest.LogCaptureFixture) -> None:
    record = {
        rejections.KEY: [
            {"plugin": "P", "code": "Unschedulable", "reasons": ["r"], "nodes": ["n-9"], rejections.RANGES: ["n-[9-1]"]}
        ]
    }
    with caplog.at_level(logging.WARNING, logger=rejections.__name__):
        assert list(rejections.by_node(record)) == ["n-9"]
    assert "bad node range" in caplog.text


def test_one_expression_reads_at_most_a_bounded_number_of_names() -> None:
    width = len(str(node_ranges.MAX_EXPANDED))
    with pytest.raises(BadExpression, match="stands for more than"):
        next(expand(f"n-[{0:0{width}d}-{node_ranges.MAX_EXPANDED:0{width}d}]"))
