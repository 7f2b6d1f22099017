"""DynamicResources' Score for prioritized lists (1.37's ``computeScore``), pure.

Why this module exists: with DRAPrioritizedList a request lists alternatives
(``firstAvailable``), and Kubernetes 1.37 prefers the nodes where earlier
alternatives fit. The plugin's Score adds, for every subrequest a node's
allocation picked, ``FirstAvailableDeviceRequestMaxSize - i`` (``i`` the
subrequest's position in its list), over all the pod's claims: claims already
allocated count with their ``status.allocation``, the others with the node's
allocation from Filter, in order. NormalizeScore is the default
normalization (highest score 100); the plugin's weight in the default profile
is 2 (``applyDynamicResources`` in kube-scheduler's default_plugins.go).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from services.kube.resource_limits import FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE

DEFAULT_WEIGHT = 2
"""DynamicResources' score weight in kube-scheduler 1.37's default profile."""


class ScoreError(Exception):
    """The node's allocations do not cover the pod's unallocated claims; ``str()`` is Kubernetes' message."""


def _sub_request_ref(request: str, sub_request: str) -> str:
    """``resourceclaim.CreateSubRequestRef``."""
    return f"{request}/{sub_request}"


def has_prioritized_list(claims: Iterable[Mapping[str, Any]]) -> bool:
    """Whether any request of these claims has subrequests (without one, every node scores 0)."""
    return any(
        request.get("firstAvailable")
        for claim in claims
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ()
    )


def compute_score(
    claims: Iterable[Mapping[str, Any]],
    allocations: Sequence[Mapping[str, Any]],
    *,
    to_allocate: Iterable[bool] | None = None,
) -> int:
    """The node's raw score for the pod's ``claims`` (``computeScore``).

    ``allocations`` are the node's allocation results of the claims without
    ``status.allocation``, in claim order. ``to_allocate`` says per claim
    whether it is one of those (default: every claim without an allocation);
    a classic claim waiting for its driver is neither allocated nor allocated
    here, and counts nothing.
    """
    score = 0
    unallocated_index = 0
    claims = list(claims)
    flags = list(to_allocate) if to_allocate is not None else [None] * len(claims)
    for claim, flag in zip(claims, flags, strict=True):
        allocation = (claim.get("status") or {}).get("allocation")
        if allocation is None:
            if flag is False:
                continue
            if unallocated_index >= len(allocations):
                raise ScoreError(
                    f"number of allocations {len(allocations)} is smaller than number of claims needing allocation"
                )
            allocation = allocations[unallocated_index]
            unallocated_index += 1
        allocated = {
            str(result.get("request", ""))
            for result in (allocation.get("devices") or {}).get("results") or ()
            if "/" in str(result.get("request", ""))
        }
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            for i, sub in enumerate(request.get("firstAvailable") or ()):
                if _sub_request_ref(str(request.get("name", "")), str(sub.get("name", ""))) in allocated:
                    score += FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE - i
    return score
