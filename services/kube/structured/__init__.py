"""The structured DRA allocator (Kubernetes 1.31 to 1.37, on the hub form of ``resource.k8s.io``).

Pure logic on wire-form objects; the DynamicResources scheduler plugin calls
`Allocator.allocate` once per candidate node.
"""

from services.kube.node_selectors import NodeSelector, NodeSelectorError
from services.kube.structured.allocator import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocatedState,
    AllocationAborted,
    AllocationError,
    Allocator,
    Features,
    claim_ref,
)
from services.kube.structured.pools import DeviceID, Pool, PoolError, PoolMode, SliceIndex, gather_pools
from services.kube.structured.selectors import DeviceEntry, DeviceKey, SelectorCache, device_key

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "AllocatedState",
    "AllocationAborted",
    "AllocationError",
    "Allocator",
    "DeviceEntry",
    "DeviceID",
    "DeviceKey",
    "Features",
    "NodeSelector",
    "NodeSelectorError",
    "Pool",
    "PoolError",
    "PoolMode",
    "SelectorCache",
    "SliceIndex",
    "claim_ref",
    "device_key",
    "gather_pools",
]
