"""A fresh log for each benchmark run, and on Kafka its topics deleted when the run ends.

Every benchmark run writes to a log of its own, so no run reads another's
records: a new file for the embedded log (in the benchmark's temporary
directory, removed with it), a new topic prefix on Kafka. The topics used to
stay on the broker, and a broker keeps working for every partition it holds
(its retention checks, every second here, and its log cleaner walk them all),
so each series left the next one a busier broker and more disk. An idle broker
with 660 such partitions used ~13 % of a core against ~10 % with 89, most of
either the launcher's busy wait fixed since (docs/decisions/latency.md,
"Seventeenth pass"). So a run's topics — every topic whose name starts with
its prefix — are deleted when it ends.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient

from services.bus.kafka.config import KafkaSettings, client_options
from services.bus.urls import KafkaTarget, parse_bus_url

BACKENDS = ("embedded", "kafka")


def fresh_prefix(stem: str = "bench") -> str:
    """A topic prefix (or file name stem) no other run uses: ``stem`` and 8 random hex digits."""
    return f"{stem}{uuid.uuid4().hex[:8]}-"


def fresh_url(backend: str, *, kafka: str = "", workdir: Path | None = None, stem: str = "bench") -> str:
    """A bus URL of a log no other run has written: a new prefix on ``kafka``, or a new file in ``workdir``."""
    prefix = fresh_prefix(stem)
    if backend == "kafka":
        if not kafka:
            raise SystemExit("--backend kafka needs --kafka HOST:PORT or KAFKA_BOOTSTRAP_SERVERS")
        return f"kafka://{kafka}?prefix={prefix}"
    if backend != "embedded" or workdir is None:
        raise ValueError(f"backend {backend!r}: one of {', '.join(BACKENDS)}, the embedded log with a workdir")
    return f"sqlite://{workdir / (prefix + 'bus.db')}"


async def drop(url: str) -> list[str]:
    """Delete the Kafka topics of the log at ``url`` (those named with its prefix); returns their names.

    An embedded log's file is left to the directory it lives in. A Kafka URL
    without a prefix is refused: its topics are not a benchmark's own.
    """
    target = parse_bus_url(url)
    if not isinstance(target, KafkaTarget):
        return []
    if not target.prefix:
        raise ValueError(f"{url}: no topic prefix, so no topics of its own to delete")
    admin = AIOKafkaAdminClient(**client_options(target, KafkaSettings.from_options(target.options)))
    await admin.start()
    try:
        names = sorted(name for name in await admin.list_topics() if name.startswith(target.prefix))
        if names:
            await admin.delete_topics(names)
        return names
    finally:
        await admin.close()


@asynccontextmanager
async def dropped_after(url: str) -> AsyncIterator[str]:
    """``url``, whose Kafka topics are deleted (`drop`) when the block ends, however it ends.

    A failed deletion (the broker gone, say) is reported on stderr, not raised:
    it must not hide the run's own error, nor turn a finished run into a failed one.
    """
    try:
        yield url
    finally:
        try:
            await drop(url)
        except Exception as exc:  # reported, see above
            print(f"fresh_logs: the run's topics at {url} were not deleted: {exc!r}", file=sys.stderr)
