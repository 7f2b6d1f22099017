"""aiokafka's exceptions, translated into the port's.

Callers above the bus only know `ProducerFenced`, `BusUnavailable` and
`BusError`; this is the one place that knows which aiokafka error means what.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from aiokafka import errors as kafka_errors

from services.bus.port import BusError, BusUnavailable, ProducerFenced, RecordTooLarge

FENCED: tuple[type[BaseException], ...] = (
    kafka_errors.ProducerFenced,
    kafka_errors.InvalidProducerEpoch,
)
TOO_LARGE: tuple[type[BaseException], ...] = (
    kafka_errors.MessageSizeTooLargeError,  # the client's max_request_size, or the broker's MESSAGE_TOO_LARGE
    kafka_errors.RecordListTooLargeError,
    kafka_errors.RecordTooLargeError,
)
UNAVAILABLE: tuple[type[BaseException], ...] = (
    kafka_errors.KafkaConnectionError,
    kafka_errors.NodeNotReadyError,
    kafka_errors.KafkaTimeoutError,
    kafka_errors.RequestTimedOutError,
    kafka_errors.NotLeaderForPartitionError,
    kafka_errors.LeaderNotAvailableError,
    kafka_errors.CoordinatorNotAvailableError,
    TimeoutError,
    ConnectionError,
)


class UnknownTopic(BusError):
    """The topic (or this partition of it) does not exist."""

    def __init__(self, topic: str, partition: int = 0) -> None:
        super().__init__(f"unknown topic or partition: {topic}[{partition}]")


def translate(exc: BaseException, what: str) -> BusError | None:
    """The port exception for an aiokafka one (None: not ours to translate)."""
    if isinstance(exc, BusError):
        return exc
    if isinstance(exc, FENCED):
        return ProducerFenced(f"{what}: fenced by a newer producer with the same transactional id "
                              f"(or the transaction timed out): {exc}")
    if isinstance(exc, TOO_LARGE):
        return RecordTooLarge(f"{what}: {exc!r}")
    if isinstance(exc, UNAVAILABLE):
        return BusUnavailable(f"{what}: Kafka is not reachable: {exc!r}")
    if isinstance(exc, kafka_errors.KafkaError):
        return BusError(f"{what}: {exc!r}")
    return None


@contextlib.contextmanager
def translated(what: str) -> Iterator[None]:
    """Run a block, raising the port's exceptions for aiokafka's."""
    try:
        yield
    except BusError:
        raise
    except Exception as exc:
        port = translate(exc, what)
        if port is None:
            raise
        raise port from exc
