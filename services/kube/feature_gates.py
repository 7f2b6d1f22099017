"""Feature gates, parsed from kube's ``--feature-gates`` syntax.

Why this module exists: which alpha DRA fields the API accepts depends on
gates (`services.api.admission.gated_fields`), and every component must agree on them.
The syntax, the error texts and the dependency check are Kubernetes' own
(k8s.io/component-base/featuregate and kube-apiserver's options validation):

- ``DynamicResourceAllocation=true,DRAControlPlaneController=false``; values
  are Go booleans (``1``, ``t``, ``T``, ``TRUE``, ``true``, ``True``, and the
  false forms); ``AllAlpha``/``AllBeta`` set every alpha/beta gate not set
  explicitly;
- ``unrecognized feature gate: Foo``, ``missing bool value for Foo``,
  ``invalid value of Foo=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax``;
- ``DRAControlPlaneController feature requires DynamicResourceAllocation
  feature to be enabled``.

Which gates exist, and their stage and default, depend on the Kubernetes
release a gate set is evaluated at (`services.kube.feature_gates_table`,
Kubernetes' versioned feature specs and ``--emulated-version``):

``FeatureGates()`` is release 1.37 (today's DRA, ``--emulated-version``'s
default, `services.kube.emulated_version`); ``FeatureGates(release="1.31")``
(``--emulated-version=1.31``) is the behaviour the seeds describe:

============================  =======  ========  =============================================
gate                          stage    default   what it guards
============================  =======  ========  =============================================
DynamicResourceAllocation     alpha    **true**  pod DRA fields (``spec.resourceClaims``,
                                                 ``resources.claims``, ``resourceClaimStatuses``).
                                                 Kubernetes 1.31 defaults it to false; in
                                                 draplane DRA is the product, so it is on.
DRAControlPlaneController     alpha    false     "classic DRA": claim ``spec.controller``,
                                                 ``status.allocation.controller``,
                                                 ``status.deallocationRequested``, DeviceClass
                                                 ``suitableNodes``, PodSchedulingContext use.
DRAAdminAccess                alpha    false     ``adminAccess`` in device requests.
============================  =======  ========  =============================================

and the gates 1.32 to 1.37 added are pre-alpha there: known, off, and setting
them is refused (``cannot set feature gate DRAPrioritizedList to true, feature
is PreAlpha at emulated version 1.31, min compatibility version 1.30``).

At 1.37 (the default) the gates have Kubernetes 1.37.2's specs:
DynamicResourceAllocation, DRAAdminAccess, DRAPrioritizedList,
DRAResourceClaimDeviceStatus and DRAExtendedResource are GA and locked on
(``cannot set feature gate DRAAdminAccess to false, feature is locked to
true``); DRADeviceTaints and DRADeviceTaintRules GA, on, not locked;
DRAPartitionableDevices, DRAConsumableCapacity, DRADeviceBindingConditions and
DRASchedulerFilterTimeout beta and on; SchedulerPopFromBackoffQ (a
kube-scheduler gate, not DRA's: the scheduling queue pops from backoffQ when
activeQ is empty; pre-alpha at 1.31) beta and on; DRAControlPlaneController stays alpha
and off (draplane still serves classic DRA through v1alpha3). 1.37 checks
gate dependencies in component-base's words (``DRADeviceTaintRules is
enabled, but depends on features that are disabled: [DRADeviceTaints]``).

DRAAdminAccess does not exist in 1.31 — there ``adminAccess`` is always
accepted. It arrived in 1.32 (alpha, default off), and draplane follows the
1.32 semantics at release 1.31: with the gate off, ``adminAccess`` is dropped
from new claims and templates unless the stored object already used it. So a
1.31 manifest that sets ``adminAccess`` needs
``--emulated-version=1.31 --feature-gates=DRAAdminAccess=true`` here. At 1.37
``adminAccess`` is always kept, and admitted only in a namespace labelled
``resource.kubernetes.io/admin-access: "true"`` (`services.api.admission.admin_access`).

Turning DynamicResourceAllocation off does not unregister resource.k8s.io (in
Kubernetes that is ``--runtime-config``), and PodSchedulingContext stays
registered whatever the gates say, as in 1.31, so that stale objects can still
be deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from services.kube.feature_gates_table import (
    ALL_ALPHA,
    ALL_BETA,
    DEFAULT_RELEASE,
    DEPENDENCIES,
    DEPENDENCIES_SINCE,
    DRA_ADMIN_ACCESS,
    DRA_CONSUMABLE_CAPACITY,
    DRA_CONTROL_PLANE_CONTROLLER,
    DRA_DEVICE_BINDING_CONDITIONS,
    DRA_DEVICE_TAINT_RULES,
    DRA_DEVICE_TAINTS,
    DRA_EXTENDED_RESOURCE,
    DRA_PARTITIONABLE_DEVICES,
    DRA_PRIORITIZED_LIST,
    DRA_RESOURCE_CLAIM_DEVICE_STATUS,
    DRA_SCHEDULER_FILTER_TIMEOUT,
    DYNAMIC_RESOURCE_ALLOCATION,
    RELEASE_1_31,
    RELEASE_1_37,
    RELEASES,
    SCHEDULER_POP_FROM_BACKOFF_Q,
    FeatureSpec,
    PreRelease,
    features_at,
    release_key,
)

__all__ = [
    "ALL_ALPHA",
    "ALL_BETA",
    "DEFAULT_RELEASE",
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
    "KNOWN_FEATURES",
    "RELEASES",
    "RELEASE_1_31",
    "RELEASE_1_37",
    "SCHEDULER_POP_FROM_BACKOFF_Q",
    "FeatureGateError",
    "FeatureGates",
    "FeatureSpec",
    "parse_go_bool",
]

KNOWN_FEATURES: Mapping[str, FeatureSpec] = features_at(DEFAULT_RELEASE)
"""Every known gate's spec at the default release (1.37); `features_at` gives another release's."""
_SPECIAL: Mapping[str, PreRelease] = MappingProxyType({ALL_ALPHA: "ALPHA", ALL_BETA: "BETA"})

_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


class FeatureGateError(ValueError):
    """A --feature-gates value Kubernetes would refuse; the message is kube's."""

    def flag_error(self, value: str) -> str:
        """How kube's command line reports it: ``invalid argument "..." for "--feature-gates" flag: ...``."""
        return f'invalid argument "{value}" for "--feature-gates" flag: {self}'


def parse_go_bool(text: str) -> bool:
    """strconv.ParseBool."""
    if text in _GO_TRUE:
        return True
    if text in _GO_FALSE:
        return False
    raise ValueError(f'strconv.ParseBool: parsing "{text}": invalid syntax')


@dataclass(frozen=True)
class FeatureGates:
    """An immutable set of gate values at one release: its defaults overridden by what was set explicitly."""

    overrides: Mapping[str, bool] = field(default_factory=dict)
    release: str = DEFAULT_RELEASE
    _enabled: Mapping[str, bool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        resolved = _resolve(self.overrides, features_at(self.release))
        object.__setattr__(self, "overrides", MappingProxyType(dict(self.overrides)))
        object.__setattr__(self, "_enabled", MappingProxyType(resolved))

    # -- construction

    @classmethod
    def parse(cls, value: str, *, validate: bool = True, release: str = DEFAULT_RELEASE) -> FeatureGates:
        """Parse ``--feature-gates``; with ``validate`` also apply the release's dependency checks."""
        settings: dict[str, bool] = {}
        for item in value.split(","):
            if not item:
                continue
            key, sep, raw = item.partition("=")
            key = key.strip()
            if not sep:
                raise FeatureGateError(f"missing bool value for {key}")
            raw = raw.strip()
            try:
                settings[key] = parse_go_bool(raw)
            except ValueError as exc:
                raise FeatureGateError(f"invalid value of {key}={raw}, err: {exc}") from None
        return cls.from_map(settings, validate=validate, release=release)

    @classmethod
    def from_map(
        cls, settings: Mapping[str, bool], *, validate: bool = True, release: str = DEFAULT_RELEASE
    ) -> FeatureGates:
        """Explicit settings at ``release``; refused as component-base refuses them (unknown, locked, pre-alpha)."""
        known = features_at(release)
        errors: list[str] = []
        for key, value in settings.items():
            if key not in known and key not in _SPECIAL:
                # component-base returns at the first unknown gate.
                raise FeatureGateError(f"unrecognized feature gate: {key}")
            spec = known.get(key)
            if spec is None:
                continue
            if spec.lock_to_default and value != spec.default:
                errors.append(
                    f"cannot set feature gate {key} to {_go_bool(value)}, feature is locked to {_go_bool(spec.default)}"
                )
            elif spec.pre_release == "PRE-ALPHA":
                major, minor = release_key(release)
                errors.append(
                    f"cannot set feature gate {key} to {_go_bool(value)}, feature is PreAlpha at emulated version "
                    f"{release}, min compatibility version {major}.{minor - 1}"
                )
        _raise(errors)
        gates = cls(dict(settings), release)
        if validate:
            gates.validate()
        return gates

    def with_overrides(self, settings: Mapping[str, bool]) -> FeatureGates:
        """These gates with more explicit settings on top (later wins), at the same release."""
        return FeatureGates.from_map({**self.overrides, **settings}, release=self.release)

    # -- queries

    def enabled(self, name: str) -> bool:
        try:
            return self._enabled[name]
        except KeyError:
            raise FeatureGateError(f"feature {name!r} is not registered in FeatureGate") from None

    @property
    def dynamic_resource_allocation(self) -> bool:
        return self.enabled(DYNAMIC_RESOURCE_ALLOCATION)

    @property
    def dra_control_plane_controller(self) -> bool:
        return self.enabled(DRA_CONTROL_PLANE_CONTROLLER)

    @property
    def dra_admin_access(self) -> bool:
        return self.enabled(DRA_ADMIN_ACCESS)

    def as_dict(self) -> dict[str, bool]:
        """Every known gate with its effective value at this release."""
        return dict(self._enabled)

    def validate(self) -> None:
        """The cross-gate checks: kube-apiserver 1.31's classic-DRA one, and from 1.37 the gate dependencies."""
        if self.dra_control_plane_controller and not self.dynamic_resource_allocation:
            raise FeatureGateError(
                f"{DRA_CONTROL_PLANE_CONTROLLER} feature requires {DYNAMIC_RESOURCE_ALLOCATION} feature to be enabled"
            )
        if release_key(self.release) < release_key(DEPENDENCIES_SINCE):
            return
        errors = []
        for feature, deps in sorted(DEPENDENCIES.items()):
            if not self.enabled(feature):
                continue
            disabled = [dep for dep in deps if not self.enabled(dep)]
            if disabled:
                errors.append(
                    f"{feature} is enabled, but depends on features that are disabled: [{' '.join(disabled)}]"
                )
        _raise(errors)

    def __str__(self) -> str:
        """The explicit settings in ``--feature-gates`` syntax, sorted, as kube prints them."""
        return ",".join(f"{k}={_go_bool(v)}" for k, v in sorted(self.overrides.items()))

    @staticmethod
    def known_features(release: str = DEFAULT_RELEASE) -> list[str]:
        """kube's help text lines: ``DRAAdminAccess=true|false (ALPHA - default=false)``.

        GA and pre-alpha gates are not listed, as in component-base.
        """
        lines = [f"{name}=true|false ({stage} - default=false)" for name, stage in _SPECIAL.items()]
        for name, spec in features_at(release).items():
            if spec.pre_release in ("ALPHA", "BETA"):
                lines.append(f"{name}=true|false ({spec.pre_release} - default={_go_bool(spec.default)})")
        return sorted(lines)


def _raise(errors: list[str]) -> None:
    """component-base reports its errors as one aggregate: the message alone, or ``[a, b]``."""
    if len(errors) == 1:
        raise FeatureGateError(errors[0])
    if errors:
        raise FeatureGateError(f"[{', '.join(errors)}]")


def _resolve(settings: Mapping[str, bool], known: Mapping[str, FeatureSpec]) -> dict[str, bool]:
    enabled = {name: spec.default for name, spec in known.items()}
    # AllAlpha/AllBeta apply to the gates not set explicitly; explicit settings always win.
    for special, stage in _SPECIAL.items():
        if special in settings:
            for name in _gates_at(known, stage):
                if name not in settings:
                    enabled[name] = settings[special]
    for name, value in settings.items():
        if name in known:
            enabled[name] = value
    return enabled


def _gates_at(known: Mapping[str, FeatureSpec], stage: PreRelease) -> Iterable[str]:
    return (name for name, spec in known.items() if spec.pre_release == stage)


def _go_bool(value: bool) -> str:
    return "true" if value else "false"
