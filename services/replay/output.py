"""How replayed records are printed: kcat-like JSON lines, YAML documents or a table."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
import yaml


@dataclass(frozen=True, slots=True)
class ReplayedRecord:
    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    key: str | None
    type: str  # ADDED, MODIFIED, DELETED, TOMBSTONE, or RAW for non-object topics
    object: Any
    request_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "offset": self.offset,
            "ts": self.timestamp_ms,
            "time": iso(self.timestamp_ms),
            "key": self.key,
            "type": self.type,
            "request": self.request_id,
            "object": self.object,
        }


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


TABLE_HEADER = f"{'OFFSET':>8}  {'TIME':<24}  {'TYPE':<9}  KEY"


def render(record: ReplayedRecord, fmt: str) -> str:
    if fmt == "json":
        return orjson.dumps(record.to_json()).decode()
    if fmt == "yaml":
        return "---\n" + yaml.safe_dump(record.to_json(), sort_keys=False).rstrip()
    if fmt == "table":
        return f"{record.offset:>8}  {iso(record.timestamp_ms):<24}  {record.type:<9}  {record.key}"
    raise ValueError(f"unknown output format {fmt!r}: use json, yaml or table")
