"""Process-wide Prometheus metrics of the runtime layer (log consumption and writes).

Every component serves these on ``/metrics``; component-specific metrics live
next to their component.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

MALFORMED_RECORDS = Counter(
    "draplane_malformed_records_total",
    "Log records that could not be decoded and were skipped.",
    ["topic"],
)

INFORMER_HANDLER_FAILURES = Counter(
    "draplane_informer_handler_failures_total",
    "Informer handler calls that raised; the informer logged the traceback and went on with the next record.",
    ["resource", "handler"],
)

INFORMER_READ_FAILURES = Counter(
    "draplane_informer_read_failures_total",
    "Informer reads of the log or snapshot saves that failed other than by the log being away; "
    "the informer logged the traceback and tried again with backoff.",
    ["informer"],
)

COMMITTED_REQUESTS = Counter(
    "draplane_committer_requests_total",
    "Requests the committer answered, by operation and HTTP code.",
    ["op", "code"],
)

COMMIT_BATCH_SIZE = Histogram(
    "draplane_committer_batch_size",
    "Requests per committer transaction.",
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000),
)

CLIENT_REQUEST_SECONDS = Histogram(
    "draplane_client_request_duration_seconds",
    "Time from sending a request to receiving its reply.",
    ["op"],
)
