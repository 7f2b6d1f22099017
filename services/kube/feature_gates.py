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

The gates draplane knows:

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

DRAAdminAccess does not exist in 1.31 — there ``adminAccess`` is always
accepted. It arrived in 1.32 (alpha, default off), and draplane follows the
1.32 semantics: with the gate off, ``adminAccess`` is dropped from new claims
and templates unless the stored object already used it. So a 1.31 manifest
that sets ``adminAccess`` needs ``--feature-gates=DRAAdminAccess=true`` here.

Turning DynamicResourceAllocation off does not unregister resource.k8s.io (in
Kubernetes that is ``--runtime-config``), and PodSchedulingContext stays
registered whatever the gates say, as in 1.31, so that stale objects can still
be deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

__all__ = [
    "ALL_ALPHA",
    "ALL_BETA",
    "DRA_ADMIN_ACCESS",
    "DRA_CONTROL_PLANE_CONTROLLER",
    "DYNAMIC_RESOURCE_ALLOCATION",
    "KNOWN_FEATURES",
    "FeatureGateError",
    "FeatureGates",
    "FeatureSpec",
    "parse_go_bool",
]

DYNAMIC_RESOURCE_ALLOCATION = "DynamicResourceAllocation"
DRA_CONTROL_PLANE_CONTROLLER = "DRAControlPlaneController"
DRA_ADMIN_ACCESS = "DRAAdminAccess"
ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"

PreRelease = Literal["ALPHA", "BETA", "GA", "DEPRECATED"]


@dataclass(frozen=True, slots=True)
class FeatureSpec:
    default: bool
    pre_release: PreRelease
    lock_to_default: bool = False


KNOWN_FEATURES: Mapping[str, FeatureSpec] = MappingProxyType(
    {
        DYNAMIC_RESOURCE_ALLOCATION: FeatureSpec(default=True, pre_release="ALPHA"),
        DRA_CONTROL_PLANE_CONTROLLER: FeatureSpec(default=False, pre_release="ALPHA"),
        DRA_ADMIN_ACCESS: FeatureSpec(default=False, pre_release="ALPHA"),
    }
)
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
    """An immutable set of gate values: defaults overridden by what was set explicitly."""

    overrides: Mapping[str, bool] = field(default_factory=dict)
    _enabled: Mapping[str, bool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        resolved = _resolve(self.overrides)
        object.__setattr__(self, "overrides", MappingProxyType(dict(self.overrides)))
        object.__setattr__(self, "_enabled", MappingProxyType(resolved))

    # -- construction

    @classmethod
    def parse(cls, value: str, *, validate: bool = True) -> FeatureGates:
        """Parse ``--feature-gates``; with ``validate`` also apply kube-apiserver's dependency checks."""
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
        return cls.from_map(settings, validate=validate)

    @classmethod
    def from_map(cls, settings: Mapping[str, bool], *, validate: bool = True) -> FeatureGates:
        for key in settings:
            if key not in KNOWN_FEATURES and key not in _SPECIAL:
                raise FeatureGateError(f"unrecognized feature gate: {key}")
            spec = KNOWN_FEATURES.get(key)
            if spec is not None and spec.lock_to_default and settings[key] != spec.default:
                raise FeatureGateError(
                    f"cannot set feature gate {key} to {_go_bool(settings[key])}, "
                    f"feature is locked to {_go_bool(spec.default)}"
                )
        gates = cls(dict(settings))
        if validate:
            gates.validate()
        return gates

    def with_overrides(self, settings: Mapping[str, bool]) -> FeatureGates:
        """These gates with more explicit settings on top (later wins)."""
        return FeatureGates.from_map({**self.overrides, **settings})

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
        """Every known gate with its effective value."""
        return dict(self._enabled)

    def validate(self) -> None:
        """kube-apiserver's cross-gate checks."""
        if self.dra_control_plane_controller and not self.dynamic_resource_allocation:
            raise FeatureGateError(
                f"{DRA_CONTROL_PLANE_CONTROLLER} feature requires {DYNAMIC_RESOURCE_ALLOCATION} feature to be enabled"
            )

    def __str__(self) -> str:
        """The explicit settings in ``--feature-gates`` syntax, sorted, as kube prints them."""
        return ",".join(f"{k}={_go_bool(v)}" for k, v in sorted(self.overrides.items()))

    @staticmethod
    def known_features() -> list[str]:
        """kube's help text lines: ``DRAAdminAccess=true|false (ALPHA - default=false)``."""
        lines = [f"{name}=true|false ({stage} - default=false)" for name, stage in _SPECIAL.items()]
        for name, spec in KNOWN_FEATURES.items():
            lines.append(f"{name}=true|false ({spec.pre_release} - default={_go_bool(spec.default)})")
        return sorted(lines)


def _resolve(settings: Mapping[str, bool]) -> dict[str, bool]:
    enabled = {name: spec.default for name, spec in KNOWN_FEATURES.items()}
    # AllAlpha/AllBeta apply to the gates not set explicitly; explicit settings always win.
    for special, stage in _SPECIAL.items():
        if special in settings:
            for name in _gates_at(stage):
                if name not in settings:
                    enabled[name] = settings[special]
    for name, value in settings.items():
        if name in KNOWN_FEATURES:
            enabled[name] = value
    return enabled


def _gates_at(stage: PreRelease) -> Iterable[str]:
    return (name for name, spec in KNOWN_FEATURES.items() if spec.pre_release == stage)


def _go_bool(value: bool) -> str:
    return "true" if value else "false"
