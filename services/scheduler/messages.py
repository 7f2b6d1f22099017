"""The FailedScheduling message, formatted exactly as kube-scheduler 1.31's FitError.

``0/N nodes are available: <PreFilterMsg>. <histogram of filter reasons>. <PostFilterMsg>``

* When PreFilter rejected the pod, its message replaces the per-node histogram
  (every node carries the same status, which would only repeat it).
* Otherwise each distinct reason is counted over the nodes (``2 Insufficient
  cpu``) and the entries are sorted as strings, joined with ``", "``.
* The PostFilter message (DynamicResources, then preemption) is appended after a
  space, with no period of its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from services.scheduler.status import Status

NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"


def reasons_histogram(node_to_status: Mapping[str, Status]) -> list[str]:
    counts: Counter[str] = Counter()
    for status in node_to_status.values():
        for reason in status.reasons:
            counts[reason] += 1
    return sorted(f"{count} {reason}" for reason, count in counts.items())


def fit_error_message(
    num_all_nodes: int,
    node_to_status: Mapping[str, Status],
    *,
    pre_filter_msg: str = "",
    post_filter_msg: str = "",
) -> str:
    message = NO_NODE_AVAILABLE_MSG.format(num_all_nodes) + ":"
    if pre_filter_msg:
        message += f" {pre_filter_msg}."
    else:
        histogram = reasons_histogram(node_to_status)
        if histogram:
            message += f" {', '.join(histogram)}."
    if post_filter_msg:
        message += f" {post_filter_msg}"
    return message
