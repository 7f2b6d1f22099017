"""The size limits resource.k8s.io declares on its types (k8s.io/api/resource/v1alpha3, Kubernetes 1.31).

Why this module exists: these constants are part of the API types
(``ResourceSliceMaxDevices``, ``DeviceRequestsMaxSize``, ...). Validation
enforces them, and the driver, the claim helpers and the classic controller
size their writes by them; one copy keeps every user on the same number.
Kubernetes 1.37 (v1, v1beta2, v1beta1) adds limits for its new fields and
raises reservedFor to 256; `ResourceLimits` bundles the numbers that differ
between the releases so validation can be asked for either.
"""

from __future__ import annotations

from dataclasses import dataclass

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

# Kubernetes 1.37 (k8s.io/api/resource/v1, v1beta2, v1beta1 and pkg/apis/resource/types.go).

RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE_1_37 = 256
"""``ResourceClaimReservedForMaxSize`` since 1.33: consumers in a claim's status.reservedFor."""

RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES = 64
"""``ResourceSliceMaxDevicesWithAdvancedFeatures``: devices in a slice where a device has taints or counters."""

RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = 32
"""``ResourceSliceMaxAttributesAndCapacitiesPerDevice``: attributes plus capacities of one device (1.31 and 1.37)."""

RESOURCE_SLICE_MAX_COUNTER_SETS = 8
"""``ResourceSliceMaxCounterSets``: entries of a slice's sharedCounters."""

RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET = 32
"""``ResourceSliceMaxCountersPerCounterSet``: counters in one shared counter set."""

RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE = 2
"""``ResourceSliceMaxDeviceCounterConsumptionsPerDevice``: entries of a device's consumesCounters."""

RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION = 32
"""``ResourceSliceMaxCountersPerDeviceCounterConsumption``: counters in one consumesCounters entry."""

DEVICE_TAINTS_MAX_LENGTH = 16
"""``DeviceTaintsMaxLength``: taints of one device."""

DEVICE_TOLERATIONS_MAX_LENGTH = 16
"""``DeviceTolerationsMaxLength``: documented on request tolerations, but 1.37 enforces it nowhere.

Neither ``validateExactDeviceRequest``/``validateDeviceSubRequest`` nor the
declarative tags (no ``+k8s:maxItems`` on ``tolerations``) check it, so a
request with 17 tolerations is valid in 1.37; validation follows that.
"""

BINDING_CONDITIONS_MAX_SIZE = 4
"""``BindingConditionsMaxSize``: a device's bindingConditions (DRADeviceBindingConditions)."""

BINDING_FAILURE_CONDITIONS_MAX_SIZE = 4
"""``BindingFailureConditionsMaxSize``: a device's bindingFailureConditions."""

FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8
"""``FirstAvailableDeviceRequestMaxSize``: subrequests of a request's firstAvailable."""

CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024
"""``CELSelectorExpressionMaxLength``: bytes of one selector expression."""

CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000
"""``CELSelectorExpressionMaxCost``: the estimated cost limit of one selector expression (`services.kube.cel.cost`)."""

OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024
"""``OpaqueParametersMaxLength``: bytes of an opaque configuration's raw ``parameters``."""


@dataclass(frozen=True, slots=True)
class ResourceLimits:
    """The limits and list-size wording one Kubernetes release applies to resource.k8s.io objects.

    Validation takes one of these (`LIMITS_1_31` by default, what is served
    today) so the API version being validated chooses its numbers.
    ``too_many`` is 1.37's list-size style: ``Too many: N: must have at most M
    items``, reported alone (no per-entry errors); 1.31 validates every entry
    and then reports ``Too long: may not be longer than M``.
    """

    release: str
    reserved_for: int
    allocation_results: int
    too_many: bool


LIMITS_1_31 = ResourceLimits(
    release="1.31",
    reserved_for=RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE,
    allocation_results=ALLOCATION_RESULTS_MAX_SIZE,
    too_many=False,
)
LIMITS_1_37 = ResourceLimits(
    release="1.37",
    reserved_for=RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE_1_37,
    allocation_results=ALLOCATION_RESULTS_MAX_SIZE,
    too_many=True,
)
