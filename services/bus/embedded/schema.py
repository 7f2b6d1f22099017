"""The tables of the embedded log, in one place.

The schema mirrors what a Kafka broker keeps, so the adapter's code reads like
the broker's rules:

- ``topics`` / ``partitions``: declared topics; per partition a small integer
  id, the next offset, the log start offset (moved by retention), the newest
  timestamp (append timestamps never go backwards within a partition), how
  far compaction has cleaned and how many records that clean section holds
  (the cleaner's dirty ratio, `services.bus.embedded.cleaner`).
- ``records``: every record. Its integer primary key is its *position*,
  ``partition id << 40 | offset``, so a partition is one contiguous range of the
  table's own b-tree: appends go to the end of the range and a read is a range
  scan, with no secondary index to maintain (this doubles write and read
  throughput over a ``(topic, partition, offset)`` key). Offsets stay below
  2**40 per partition. ``txn`` names the open transaction that wrote the
  record and is NULL once committed. Keys are not indexed: only compaction
  looks records up by key, and it scans, as Kafka's cleaner does, instead of
  every append paying for a random insert into a key index.
- ``time_index``: like Kafka's time index, the first offset appended at each
  timestamp of a partition. As timestamps only grow with offsets, it answers
  "first offset at or after time T" for ``offset_for_time``, retention and the
  compaction lag without indexing every record by time.
- ``producers`` / ``txns`` / ``txn_partitions``: transactional ids with their
  epoch (fencing), open transactions (ids never reused), and the first offset
  each open transaction wrote in each partition. The smallest such offset is
  the partition's last stable offset (LSO): read_committed readers stop there.
- ``members`` / ``owners`` / ``group_offsets``: consumer-group leases, partition
  ownership, and committed offsets.
"""

from __future__ import annotations

SCHEMA_VERSION = 2
OFFSET_BITS = 40
MAX_OFFSET = (1 << OFFSET_BITS) - 1

# SQLite's default page size, set when the file is created (a file keeps the
# size it was made with). A commit writes every page it touched to the WAL
# whole, and a reader re-reads the pages another process changed; a steady
# workload's commits touch a handful of pages for a few records each. Against
# 16 KiB pages (used until stop 37): steady-empty +10 % pods/s (17 of 18
# alternating pairs), claim-template unchanged; bulk appends of 1,000 records
# slower (docs/decisions/latency.md, "Eighteenth pass").
PAGE_SIZE = 4096
# The WAL's length, in bytes, at which a checkpoint is due, in frames of the
# file's own page size (`checkpoint.checkpoint_frames`):
# 250 frames of the 16 KiB pages these thresholds were tuned with.
CHECKPOINT_BYTES = 4 << 20

DDL = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS topics (
    name TEXT PRIMARY KEY,
    partitions INTEGER NOT NULL,
    config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS partitions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic TEXT NOT NULL,
    partition INTEGER NOT NULL,
    next_offset INTEGER NOT NULL DEFAULT 0,
    log_start INTEGER NOT NULL DEFAULT 0,
    last_ts INTEGER NOT NULL DEFAULT 0,
    clean_upto INTEGER NOT NULL DEFAULT 0,
    clean_records INTEGER NOT NULL DEFAULT 0,
    UNIQUE (topic, partition)
);
CREATE TABLE IF NOT EXISTS records (
    pos INTEGER PRIMARY KEY,
    ts INTEGER NOT NULL,
    key BLOB,
    value BLOB,
    txn INTEGER
);
CREATE INDEX IF NOT EXISTS records_tombstones ON records (pos) WHERE value IS NULL;
CREATE TABLE IF NOT EXISTS time_index (
    pid INTEGER NOT NULL,
    ts INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    PRIMARY KEY (pid, ts, offset)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS producers (
    transactional_id TEXT PRIMARY KEY,
    epoch INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS txns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    transactional_id TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    started_ms INTEGER NOT NULL,
    timeout_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS txns_by_id ON txns (transactional_id);
CREATE TABLE IF NOT EXISTS txn_partitions (
    txn INTEGER NOT NULL,
    pid INTEGER NOT NULL,
    first_offset INTEGER NOT NULL,
    PRIMARY KEY (txn, pid)
);
CREATE INDEX IF NOT EXISTS txn_partitions_by_pid ON txn_partitions (pid, first_offset);
CREATE TABLE IF NOT EXISTS members (
    grp TEXT NOT NULL,
    topic TEXT NOT NULL,
    member_id TEXT NOT NULL,
    joined_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    PRIMARY KEY (grp, topic, member_id)
);
CREATE TABLE IF NOT EXISTS owners (
    grp TEXT NOT NULL,
    topic TEXT NOT NULL,
    partition INTEGER NOT NULL,
    member_id TEXT NOT NULL,
    PRIMARY KEY (grp, topic, partition)
);
CREATE TABLE IF NOT EXISTS group_offsets (
    grp TEXT NOT NULL,
    topic TEXT NOT NULL,
    partition INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    PRIMARY KEY (grp, topic, partition)
);
"""

# What takes a file of version v to v + 1, run in one write transaction when
# a draplane opens it (`Database.open`).
UPGRADES: dict[int, tuple[str, ...]] = {
    # 2: keys are no longer indexed (each random key cost an append a page of
    # the index); the cleaner scans and needs the clean section's size.
    1: (
        "DROP INDEX IF EXISTS records_by_key",
        "ALTER TABLE partitions ADD COLUMN clean_records INTEGER NOT NULL DEFAULT 0",
        f"UPDATE partitions SET clean_records = (SELECT count(*) FROM records "
        f"WHERE pos >= partitions.id << {OFFSET_BITS} "
        f"AND pos < (partitions.id << {OFFSET_BITS}) + partitions.clean_upto)",
    ),
}


def upgrades_from(version: str) -> tuple[str, ...] | None:
    """The statements that take a file of ``version`` to `SCHEMA_VERSION`; None if none can."""
    if not version.isdigit() or not 1 <= int(version) <= SCHEMA_VERSION:
        return None
    return tuple(s for v in range(int(version), SCHEMA_VERSION) for s in UPGRADES[v])


# Per-connection settings. WAL lets readers run beside the one writer;
# synchronous=NORMAL is durable against process crashes (not power loss), the
# usual choice for WAL. (When a commit checkpoints: `services.bus.embedded.checkpoint`.)
CONNECTION_PRAGMAS = (
    "PRAGMA synchronous=NORMAL",
    "PRAGMA temp_store=MEMORY",
    "PRAGMA cache_size=-32768",
)


def base(pid: int) -> int:
    """The position of offset 0 of partition ``pid``."""
    return pid << OFFSET_BITS
