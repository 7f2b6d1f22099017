"""Round trips per committed batch, from a Kafka broker's request log: what a commit waits for.

    .venv/bin/python ops/bench/kafka_requests.py BROKER_LOG [--committer draplane-committer]

Why: wall-clock latency on a shared 2-core machine moves by 2x between runs;
the requests a transaction makes, and the ones the broker refused and the
client retried, do not. The broker logs every request it completed, with
its answer and its own time, when ``kafka.request.logger`` is at DEBUG; on a
running broker (``ops/kafka/start``) that is

    java -cp '.cache/kafka/4.1.1/libs/*' kafka.admin.ConfigCommand --bootstrap-server HOST:PORT \\
        --entity-type broker-loggers --entity-name 1 --alter --add-config kafka.request.logger=DEBUG

(its log is ``<data>/broker.log``; set it back to WARN afterwards). This
script reads such a log (or the slice of it a run wrote) and prints, for the
committer's transactional id: each request type per committed transaction
(EndTxn with commit), the broker's time for it, the error codes answered
(each one a client retry), and the timeline of a transaction — first
transactional request to EndTxn answered, and to its markers written (when
read_committed consumers can see it). ``WRITE_TXN_MARKERS`` counts every
transaction on the broker, not only the committer's. Last, where the wait
between a commit and its readers goes (``ops/bench/latency.py`` calls it
"commit → seen by another process", from the record's append time): the
committer's ``objects`` write answered → the transaction's markers written →
each reader's Fetch of ``objects`` answered with it; what is left of that
figure is the readers' own processes.
"""

from __future__ import annotations

import argparse
import bisect
import json
import re
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

MARK = "Completed request:"
TAIL = " (kafka.request.logger)"


@dataclass(frozen=True)
class Logged:
    start_ms: float
    end_ms: float
    api: str
    committer: bool
    verify: bool  # a broker's own AddPartitionsToTxn check of a transactional write (KIP-890)
    body: dict[str, Any]


def read_log(path: str, committer: str) -> Iterator[Logged]:
    with open(path, errors="replace") as lines:
        for line in lines:
            at = line.find(MARK)
            if at < 0:
                continue
            try:
                end = datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S,%f").timestamp() * 1000
                body = json.loads(line[at + len(MARK) : line.rfind(TAIL)])
            except ValueError:
                continue
            if body.get("listener") == "CONTROLLER":
                continue
            request = body.get("request") or {}
            api = body["requestHeader"]["requestApiKeyName"]
            tid = request.get("transactionalId") or request.get("v3AndBelowTransactionalId") or ""
            verify = False
            if api == "ADD_PARTITIONS_TO_TXN" and not tid:
                verify = True
                tid = ((request.get("transactions") or [{}])[0]).get("transactionalId", "")
            yield Logged(end - body["totalTimeMs"], end, api, tid.endswith(committer), verify, body)


def errors_of(body: dict[str, Any]) -> list[int]:
    return [int(c) for c in re.findall(r'[eE]rrorCode": (\d+)', json.dumps(body.get("response"))) if c != "0"]


def summary(rows: Sequence[Logged]) -> list[str]:
    commits = sum(
        1
        for r in rows
        if r.api == "END_TXN" and r.committer and not r.verify and (r.body.get("request") or {}).get("committed")
        and (r.body.get("response") or {}).get("errorCode") == 0
    )
    count: Counter[str] = Counter()
    times: dict[str, list[float]] = defaultdict(list)
    refused: Counter[tuple[str, int]] = Counter()
    for r in rows:
        if not (r.committer or r.api == "WRITE_TXN_MARKERS"):
            continue
        name = r.api + (" (broker's check)" if r.verify else "")
        count[name] += 1
        times[name].append(r.body["totalTimeMs"])
        for code in errors_of(r.body):
            refused[(name, code)] += 1
    out = [f"committed transactions: {commits}"]
    for name, n in count.most_common():
        out.append(
            f"  {name:<42} {n:6d}  per commit {n / max(commits, 1):5.2f}"
            f"  broker ms p50 {statistics.median(times[name]):6.2f}"
        )
    out.append("  answered with an error (each retried): " + (
        ", ".join(f"{name} code {code} x{n}" for (name, code), n in sorted(refused.items())) or "none"
    ))
    return out


def timeline(rows: Sequence[Logged]) -> list[str]:
    ordered = sorted((r for r in rows if (r.committer and not r.verify) or r.api == "WRITE_TXN_MARKERS"),
                     key=lambda r: r.end_ms)
    spans: dict[str, list[float]] = {"first request → EndTxn answered": [], "first request → markers written": []}
    current: list[Logged] = []
    for r in ordered:
        if r.api != "WRITE_TXN_MARKERS":
            current.append(r)
            continue
        end = next((x for x in current if x.api == "END_TXN"), None)
        if end is not None:
            first = min(x.start_ms for x in current)
            spans["first request → EndTxn answered"].append(end.end_ms - first)
            spans["first request → markers written"].append(r.end_ms - first)
        current = []
    out = []
    for name, values in spans.items():
        values.sort()
        if values:
            out.append(
                f"  {name:<34} p50 {statistics.median(values):6.1f} ms  p90 {values[int(len(values) * 0.9)]:6.1f} ms"
                f"  (n={len(values)})"
            )
    return out


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


def visibility(rows: Sequence[Logged], objects: str) -> list[str]:
    """The committer's `objects` writes answered → markers written → each reader's Fetch answered with them."""
    writes: list[tuple[float, int]] = []  # (answered, base offset)
    markers: list[float] = []
    fetches: dict[str, list[tuple[float, int]]] = defaultdict(list)  # connection → (answered, last stable offset)
    for r in rows:
        response = r.body.get("response") or {}
        if r.api == "PRODUCE" and r.committer:
            for topic in response.get("responses", []):
                if topic.get("name", "").endswith(objects):
                    writes += [(r.end_ms, p["baseOffset"]) for p in topic["partitionResponses"] if p["errorCode"] == 0]
        elif r.api == "WRITE_TXN_MARKERS":
            markers.append(r.end_ms)
        elif r.api == "FETCH" and (r.body.get("request") or {}).get("replicaId", -1) < 0:
            for topic in response.get("responses", []):
                if topic.get("topic", "").endswith(objects):
                    fetches[r.body["connection"]] += [(r.end_ms, p["lastStableOffset"]) for p in topic["partitions"]]
    markers.sort()
    to_markers: list[float] = []
    to_fetch: list[float] = []
    markers_to_fetch: list[float] = []
    for answered, offset in writes:
        i = bisect.bisect_left(markers, answered)
        if i == len(markers):
            continue
        to_markers.append(markers[i] - answered)
        for reads in fetches.values():
            seen = next((end for end, stable in reads if stable > offset and end >= answered), None)
            if seen is not None:
                to_fetch.append(seen - answered)
                markers_to_fetch.append(seen - markers[i])
    spans = {
        "objects written → markers written": to_markers,
        "objects written → a reader's Fetch answered": to_fetch,
        "markers written → that Fetch answered": markers_to_fetch,
    }
    return [
        f"  {name:<44} p50 {percentile(v, 0.5):6.1f} ms  p90 {percentile(v, 0.9):6.1f} ms  (n={len(v)})"
        for name, v in spans.items()
        if v
    ]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("log", help="the broker's log with kafka.request.logger at DEBUG")
    p.add_argument("--committer", default="draplane-committer", help="the transactional id's suffix")
    p.add_argument("--objects", default="objects", help="the objects topic's name (its stored name ends with it)")
    args = p.parse_args(argv)
    rows = list(read_log(args.log, args.committer))
    print("\n".join([*summary(rows), *timeline(rows), *visibility(rows, args.objects)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
