"""A producer that writes steadily and remembers what the log acknowledged, to read it back after the kills.

Why this module exists: ``objects-kept`` checks the workload's writes as the
API acknowledged them, which a committer retry or a lost reply can blur. Kafka's
own promise sits below that: a record acknowledged with ``acks=all`` on a
topic with ``min.insync.replicas=2`` is in the log at the offset it was given,
whichever single broker dies. The probe writes one record at a time on its own
topic through the bus port (the same idempotent producer the components use),
keeps every acknowledged offset and value and when it came, and after the run
the topic is read back and compared (`ops.chaoskit.invariants.check_acks_kept`).

Its send and acknowledgement times also say how long writes stopped when a
partition leader was killed (`AckProbe.next_ack_after`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from services.bus.port import BEGINNING, Bus, BusError, OutRecord, Producer, TopicSpec

log = logging.getLogger(__name__)

ACKS_TOPIC = "chaos-acks"
# Replicated like the declared topics (the bus decides: min(3, brokers), min.insync.replicas=2 on three).
ACKS_SPEC = TopicSpec(ACKS_TOPIC, 1, {"cleanup.policy": "delete", "retention.ms": str(24 * 60 * 60 * 1000)})


@dataclass
class AckProbe:
    """Writes ``probe-<n>`` records one at a time every ``interval`` seconds while it runs."""

    bus: Bus
    interval: float = 0.1
    acked: dict[int, bytes] = field(default_factory=dict)  # offset -> value
    # (sent, acknowledged), monotonic, in order: one write at a time, so each was sent after the one before
    ack_times: list[tuple[float, float]] = field(default_factory=list)
    failures: int = 0  # sends that raised (not acknowledged: they may or may not be in the log)
    _producer: Producer | None = None

    async def run(self) -> None:
        n = 0
        try:
            while True:
                value = f"probe-{n}".encode()
                n += 1
                sent = time.monotonic()
                try:
                    if self._producer is None:
                        self._producer = await self.bus.producer()
                    [offset] = await self._producer.send([OutRecord(ACKS_TOPIC, None, value)])
                except (BusError, OSError, TimeoutError) as exc:  # aiokafka's own errors are BusErrors
                    self.failures += 1
                    log.info("acks probe: write %r not acknowledged: %s", value, exc)
                    await asyncio.sleep(min(1.0, self.interval * 2))
                    continue
                self.acked[offset] = value
                self.ack_times.append((sent, time.monotonic()))
                await asyncio.sleep(self.interval)
        finally:
            if self._producer is not None:
                await self._producer.close()
                self._producer = None

    def next_ack_after(self, moment: float) -> float | None:
        """Seconds from ``moment`` to the acknowledgement of the first write sent after it (None: none yet).

        Only a write sent after ``moment`` counts: an answer the killed broker
        sent before it died may still be in the socket when the loop reads it.
        """
        later = [acked for sent, acked in self.ack_times if sent >= moment]
        return later[0] - moment if later else None


async def read_back(bus: Bus, *, timeout: float = 60.0) -> dict[int, bytes | None]:
    """Every record of the probe topic, offset -> value, up to its end now."""
    end = await bus.end_offset(ACKS_TOPIC)
    read: dict[int, bytes | None] = {}
    consumer = await bus.consumer(ACKS_TOPIC, start=BEGINNING)
    try:
        async with asyncio.timeout(timeout):
            while consumer.position() < end:
                for record in await consumer.getmany(timeout_ms=500):
                    read[record.offset] = record.value
    finally:
        await consumer.close()
    return read
