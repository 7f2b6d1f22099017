"""The scheduler's outbox: Events and decisions of pods bound close together share one log append."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from services.bus.port import OutRecord
from services.scheduler.outbox import Outbox


class RecordingProducer:
    def __init__(self) -> None:
        self.sends: list[tuple[float, list[bytes]]] = []

    async def send(self, records: Sequence[OutRecord]) -> list[int]:
        self.sends.append((asyncio.get_running_loop().time(), [r.value or b"" for r in records]))
        return list(range(len(records)))

    async def close(self) -> None:
        pass


class FakeBus:
    def __init__(self) -> None:
        self.producer_ = RecordingProducer()

    async def producer(self, **_: Any) -> RecordingProducer:
        return self.producer_


def record(value: str) -> OutRecord:
    return OutRecord("events", b"k", value.encode())


@pytest.mark.looptime
async def test_records_put_within_the_linger_go_out_in_one_send() -> None:
    bus = FakeBus()
    outbox = Outbox(bus, linger=0.02)  # type: ignore[arg-type]
    await outbox.start()
    loop = asyncio.get_running_loop()
    start = loop.time()
    outbox.put(record("a"))
    await asyncio.sleep(0.01)
    outbox.put(record("b"))
    await asyncio.sleep(0.05)
    assert [values for _, values in bus.producer_.sends] == [[b"a", b"b"]]
    assert bus.producer_.sends[0][0] - start == pytest.approx(0.02)
    outbox.put(record("c"))  # a new batch lingers again
    await asyncio.sleep(0.05)
    assert [values for _, values in bus.producer_.sends] == [[b"a", b"b"], [b"c"]]
    assert outbox.sent == 3 and outbox.batches == 2
    await outbox.close()


@pytest.mark.looptime
async def test_flush_sends_at_once() -> None:
    bus = FakeBus()
    outbox = Outbox(bus, linger=10.0)  # type: ignore[arg-type]
    await outbox.start()
    loop = asyncio.get_running_loop()
    start = loop.time()
    outbox.put(record("a"))
    await outbox.flush()
    assert loop.time() == pytest.approx(start)
    assert [values for _, values in bus.producer_.sends] == [[b"a"]]
    await outbox.flush()  # nothing pending: returns at once
    outbox.put(record("b"))
    await outbox.close()  # close sends what is pending without waiting for the linger
    assert loop.time() == pytest.approx(start)
    assert [values for _, values in bus.producer_.sends] == [[b"a"], [b"b"]]


@pytest.mark.looptime
async def test_without_linger_each_wakeup_sends() -> None:
    bus = FakeBus()
    outbox = Outbox(bus, linger=0)  # type: ignore[arg-type]
    await outbox.start()
    outbox.put(record("a"))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert [values for _, values in bus.producer_.sends] == [[b"a"]]
    await outbox.close()
