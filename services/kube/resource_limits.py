"""The size limits resource.k8s.io declares on its types (k8s.io/api/resource/v1alpha3, Kubernetes 1.31).

Why this module exists: these constants are part of the API types
(``ResourceSliceMaxDevices``, ``DeviceRequestsMaxSize``, ...). Validation
enforces them, and the driver, the claim helpers and the classic controller
size their writes by them; one copy keeps every user on the same number.
Later versions change some of them (v1: reservedFor 256, 64 devices per slice
that uses taints or counters); those arrive with the versions that declare them.
"""

from __future__ import annotations

RESOURCE_SLICE_MAX_DEVICES = 128
"""``ResourceSliceMaxDevices``: devices in one ResourceSlice."""

POD_SCHEDULING_NODE_LIST_MAX_SIZE = 128
"""``PodSchedulingNodeListMaxSize``: potentialNodes and unsuitableNodes of a PodSchedulingContext."""

DEVICE_REQUESTS_MAX_SIZE = 32
"""``DeviceRequestsMaxSize``: requests of a claim (and names in a constraint or config entry)."""

DEVICE_CONSTRAINTS_MAX_SIZE = 32
"""``DeviceConstraintsMaxSize``: constraints of a claim."""

DEVICE_SELECTORS_MAX_SIZE = 32
"""``DeviceSelectorsMaxSize``: selectors of a request or a class."""

DEVICE_CONFIG_MAX_SIZE = 32
"""``DeviceConfigMaxSize``: config entries of a claim or a class."""

ALLOCATION_RESULTS_MAX_SIZE = 32
"""``AllocationResultsMaxSize``: devices allocated to one claim."""

RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 32
"""``ResourceClaimReservedForMaxSize``: consumers in a claim's status.reservedFor."""
