"""The feature gates draplane knows, with each stage and default by Kubernetes release.

They are DRA's, and one of kube-scheduler's: ``SchedulerPopFromBackoffQ``
(1.33+, beta, on), which lets the scheduling queue pop a pod from backoffQ
when activeQ is empty (`services.scheduler.queue`).

Why this module exists: draplane speaks Kubernetes 1.31's resource.k8s.io
(the seeds) and 1.37's (v1, v1beta2, v1beta1), and the two releases disagree
on gate defaults — ``DRAAdminAccess`` is alpha and off in 1.32 but GA and
locked on in 1.36; ``DRAPrioritizedList`` does not exist in 1.31. Kubernetes
keeps one versioned history per gate (``pkg/features/kube_features.go``,
``VersionedSpecs``) and evaluates it at the *emulated version*
(kube-apiserver's ``--emulated-version``); a gate set here does the same at
its ``release`` (`services.kube.feature_gates.FeatureGates`).

The histories are Kubernetes 1.37.2's, with draplane's deviations marked
``# draplane``:

- ``DynamicResourceAllocation`` is on at every release (DRA is the product);
  Kubernetes defaults it off until 1.34.
- ``DRAControlPlaneController`` (classic DRA) keeps its 1.31 alpha spec at
  every release: Kubernetes removed it in 1.32, draplane still serves 1.31's
  v1alpha3 with classic DRA beside v1.
- ``DRAAdminAccess`` starts at 1.31 with 1.32's alpha spec (off): draplane
  gives 1.31's ``adminAccess`` the 1.32 semantics (see `services.kube.feature_gates`).

A release picks, per gate, the last spec whose version is not after it; a gate
with no such spec is pre-alpha there (known, off, cannot be set), as in
``featureSpecAtEmulationAndMinCompatVersion``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Literal

__all__ = [
    "ALL_ALPHA",
    "ALL_BETA",
    "DEFAULT_RELEASE",
    "DEPENDENCIES",
    "DEPENDENCIES_SINCE",
    "DRA_ADMIN_ACCESS",
    "DRA_CONSUMABLE_CAPACITY",
    "DRA_CONTROL_PLANE_CONTROLLER",
    "DRA_DEVICE_BINDING_CONDITIONS",
    "DRA_DEVICE_TAINTS",
    "DRA_DEVICE_TAINT_RULES",
    "DRA_EXTENDED_RESOURCE",
    "DRA_PARTITIONABLE_DEVICES",
    "DRA_PRIORITIZED_LIST",
    "DRA_RESOURCE_CLAIM_DEVICE_STATUS",
    "DRA_SCHEDULER_FILTER_TIMEOUT",
    "DYNAMIC_RESOURCE_ALLOCATION",
    "RELEASES",
    "RELEASE_1_31",
    "RELEASE_1_37",
    "SCHEDULER_POP_FROM_BACKOFF_Q",
    "VERSIONED_FEATURES",
    "FeatureSpec",
    "PreRelease",
    "features_at",
    "release_key",
]

DYNAMIC_RESOURCE_ALLOCATION = "DynamicResourceAllocation"
DRA_CONTROL_PLANE_CONTROLLER = "DRAControlPlaneController"
DRA_ADMIN_ACCESS = "DRAAdminAccess"
DRA_PRIORITIZED_LIST = "DRAPrioritizedList"
DRA_RESOURCE_CLAIM_DEVICE_STATUS = "DRAResourceClaimDeviceStatus"
DRA_DEVICE_TAINTS = "DRADeviceTaints"
DRA_DEVICE_TAINT_RULES = "DRADeviceTaintRules"
DRA_PARTITIONABLE_DEVICES = "DRAPartitionableDevices"
DRA_CONSUMABLE_CAPACITY = "DRAConsumableCapacity"
DRA_DEVICE_BINDING_CONDITIONS = "DRADeviceBindingConditions"
DRA_EXTENDED_RESOURCE = "DRAExtendedResource"
DRA_SCHEDULER_FILTER_TIMEOUT = "DRASchedulerFilterTimeout"
SCHEDULER_POP_FROM_BACKOFF_Q = "SchedulerPopFromBackoffQ"
ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"

RELEASE_1_31 = "1.31"
RELEASE_1_37 = "1.37"
RELEASES = (RELEASE_1_31, RELEASE_1_37)
"""The releases a gate set can be evaluated at: the two whose API draplane serves."""
DEFAULT_RELEASE = RELEASE_1_37
"""What ``FeatureGates()`` means: today's DRA (``--emulated-version``'s default); 1.31 is the seeds' behaviour."""

PreRelease = Literal["PRE-ALPHA", "ALPHA", "BETA", "GA", "DEPRECATED"]


@dataclass(frozen=True, slots=True)
class FeatureSpec:
    default: bool
    pre_release: PreRelease
    lock_to_default: bool = False


def _alpha(default: bool = False) -> FeatureSpec:
    return FeatureSpec(default=default, pre_release="ALPHA")


def _beta(default: bool) -> FeatureSpec:
    return FeatureSpec(default=default, pre_release="BETA")


def _ga(*, locked: bool) -> FeatureSpec:
    return FeatureSpec(default=True, pre_release="GA", lock_to_default=locked)


_PRE_ALPHA = FeatureSpec(default=False, pre_release="PRE-ALPHA")

VERSIONED_FEATURES: Mapping[str, tuple[tuple[str, FeatureSpec], ...]] = MappingProxyType(
    {
        DYNAMIC_RESOURCE_ALLOCATION: (
            ("1.26", _alpha(True)),  # draplane: on (Kubernetes: off)
            ("1.32", _beta(True)),  # draplane: on (Kubernetes: off)
            ("1.34", _ga(locked=False)),
            ("1.35", _ga(locked=True)),
        ),
        DRA_CONTROL_PLANE_CONTROLLER: (("1.26", _alpha()),),  # draplane: kept after its removal in 1.32
        DRA_ADMIN_ACCESS: (
            ("1.31", _alpha()),  # draplane: 1.32's alpha spec taken back to 1.31
            ("1.34", _beta(True)),
            ("1.36", _ga(locked=True)),
        ),
        DRA_PRIORITIZED_LIST: (
            ("1.33", _alpha()),
            ("1.34", _beta(True)),
            ("1.36", _ga(locked=False)),
            ("1.37", _ga(locked=True)),
        ),
        DRA_RESOURCE_CLAIM_DEVICE_STATUS: (
            ("1.32", _alpha()),
            ("1.33", _beta(True)),
            ("1.37", _ga(locked=True)),
        ),
        DRA_DEVICE_TAINTS: (("1.33", _alpha()), ("1.36", _beta(True)), ("1.37", _ga(locked=False))),
        DRA_DEVICE_TAINT_RULES: (
            ("1.35", _alpha()),
            ("1.36", _beta(False)),
            ("1.37", _ga(locked=False)),
        ),
        DRA_PARTITIONABLE_DEVICES: (("1.33", _alpha()), ("1.36", _beta(True))),
        DRA_CONSUMABLE_CAPACITY: (("1.34", _alpha()), ("1.36", _beta(True))),
        DRA_DEVICE_BINDING_CONDITIONS: (("1.34", _alpha()), ("1.36", _beta(True))),
        DRA_EXTENDED_RESOURCE: (("1.34", _alpha()), ("1.36", _beta(True)), ("1.37", _ga(locked=True))),
        DRA_SCHEDULER_FILTER_TIMEOUT: (("1.34", _beta(True)),),
        SCHEDULER_POP_FROM_BACKOFF_Q: (("1.33", _beta(True)),),
    }
)

DEPENDENCIES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        DRA_ADMIN_ACCESS: (DYNAMIC_RESOURCE_ALLOCATION,),
        DRA_CONSUMABLE_CAPACITY: (DYNAMIC_RESOURCE_ALLOCATION,),
        DRA_DEVICE_BINDING_CONDITIONS: (DYNAMIC_RESOURCE_ALLOCATION, DRA_RESOURCE_CLAIM_DEVICE_STATUS),
        DRA_DEVICE_TAINT_RULES: (DRA_DEVICE_TAINTS,),
        DRA_DEVICE_TAINTS: (DYNAMIC_RESOURCE_ALLOCATION,),
        DRA_EXTENDED_RESOURCE: (DYNAMIC_RESOURCE_ALLOCATION,),
        DRA_PARTITIONABLE_DEVICES: (DYNAMIC_RESOURCE_ALLOCATION,),
        DRA_PRIORITIZED_LIST: (DYNAMIC_RESOURCE_ALLOCATION,),
        DRA_SCHEDULER_FILTER_TIMEOUT: (DYNAMIC_RESOURCE_ALLOCATION,),
    }
)
"""1.37's ``defaultKubernetesFeatureGateDependencies`` for these gates (``DRAResourceClaimDeviceStatus``,
``SchedulerPopFromBackoffQ``: none)."""

DEPENDENCIES_SINCE = RELEASE_1_37
"""Releases from which `DEPENDENCIES` are checked; at 1.31 only kube-apiserver's classic-DRA check applies."""


def release_key(release: str) -> tuple[int, int]:
    major, _, minor = release.partition(".")
    return int(major), int(minor)


def _spec_at(history: tuple[tuple[str, FeatureSpec], ...], release: str) -> FeatureSpec:
    at = release_key(release)
    for version, spec in reversed(history):
        if release_key(version) <= at:
            return spec
    return _PRE_ALPHA


@cache
def features_at(release: str) -> Mapping[str, FeatureSpec]:
    """Every known gate's spec at ``release`` (one of `RELEASES`)."""
    if release not in RELEASES:
        raise ValueError(f"unsupported release {release!r}: draplane has the feature gates of {', '.join(RELEASES)}")
    return MappingProxyType({name: _spec_at(history, release) for name, history in VERSIONED_FEATURES.items()})
