"""Which waiters the embedded log's ``data_version`` poll wakes (`Notifier.expect`, `Notifier.wake_behind`).

The poll is the fallback for lost cross-process datagrams: it must wake every
waiter whose partition has records it has not read, and may leave asleep those
that have read up to the partition's stable end.
"""

from __future__ import annotations

import pytest

from services.bus.embedded.notify import Notifier

P = "partition:"


@pytest.mark.parametrize(
    ("read_to", "ends", "woken"),
    [
        pytest.param(5, {1: 5}, False, id="read to the stable end: stays asleep"),
        pytest.param(5, {1: 6}, True, id="the end moved past it: woken"),
        pytest.param(5, {1: 4}, False, id="the end is behind its position (a seek past it): stays asleep"),
        pytest.param(5, {2: 9}, True, id="its partition vanished: woken, to find out"),
        pytest.param(None, {1: 5}, True, id="never said what it read: woken"),
    ],
)
async def test_the_poll_wakes_only_waiters_behind_the_stable_end(
    read_to: int | None, ends: dict[int, int], woken: bool
) -> None:
    notifier = Notifier()
    event = notifier.event(P + "1")
    if read_to is not None:
        notifier.expect(P + "1", event, read_to)
    notifier.wake_behind(P, ends)
    assert event.is_set() is woken


async def test_the_lowest_end_of_the_waiters_of_one_partition_counts() -> None:
    notifier = Notifier()
    event = notifier.event(P + "1")
    notifier.expect(P + "1", event, 7)
    notifier.expect(P + "1", event, 3)  # a second consumer of the partition, further behind
    notifier.wake_behind(P, {1: 7})
    assert event.is_set()


async def test_a_wake_forgets_what_the_woken_waiters_read() -> None:
    notifier = Notifier()
    first = notifier.event(P + "1")
    notifier.expect(P + "1", first, 9)
    notifier.wake([P + "1"])
    second = notifier.event(P + "1")
    notifier.expect(P + "1", first, 2)  # a late word about the old event: it is awake, so ignored
    notifier.wake_behind(P, {1: 5})
    assert first.is_set() and second.is_set()  # nothing known about `second`'s waiters: woken


async def test_other_keys_are_left_alone() -> None:
    notifier = Notifier()
    group = notifier.event("group:g/t")
    notifier.wake_behind(P, {})
    assert not group.is_set()
