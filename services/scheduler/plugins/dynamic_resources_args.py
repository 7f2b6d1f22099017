"""DynamicResourcesArgs' ``filterTimeout``: its default and validation (kube-scheduler 1.37).

Why this module exists: the plugin's args are configuration, checked once
when the scheduler starts, apart from the plugin's per-cycle logic. In
kube-scheduler the value comes from KubeSchedulerConfiguration's pluginConfig;
draplane's scheduler takes it as a flag (seconds). As in
``SetDefaults_DynamicResourcesArgs`` and ``ValidateDynamicResourcesArgs``:
with DRASchedulerFilterTimeout on an unset value means 10 s and 0 turns the
timeout off; a negative value is invalid; with the gate off setting it is
forbidden (in Kubernetes' wording, which names the gate
"DRASchedulingFilterTimeout").
"""

from __future__ import annotations

from services.kube.feature_gates import DRA_SCHEDULER_FILTER_TIMEOUT, FeatureGates

DYNAMIC_RESOURCES_FILTER_TIMEOUT_DEFAULT = 10.0
"""``DynamicResourcesFilterTimeoutDefault`` (seconds)."""


class PluginArgsError(ValueError):
    """Invalid plugin args; ``str()`` is the field error in Kubernetes' wording."""


def _duration(seconds: float) -> str:
    """Go's ``time.Duration.String`` below a minute (what a flag in seconds gives; enough for messages)."""
    nanos = round(abs(seconds) * 1e9)
    if nanos == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    for unit, size in (("s", 10**9), ("ms", 10**6), ("µs", 10**3)):
        if nanos >= size:
            whole, frac = divmod(nanos, size)
            digits = f"{frac:0{len(str(size)) - 1}d}".rstrip("0") if frac else ""
            return f"{sign}{whole}{'.' + digits if digits else ''}{unit}"
    return f"{sign}{nanos}ns"


def filter_timeout(gates: FeatureGates, value: float | None) -> float | None:
    """The Filter timeout in seconds the plugin runs with (None: no timeout); raises `PluginArgsError`."""
    if not gates.enabled(DRA_SCHEDULER_FILTER_TIMEOUT):
        if value is not None:
            raise PluginArgsError("filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled")
        return None
    if value is None:
        return DYNAMIC_RESOURCES_FILTER_TIMEOUT_DEFAULT
    if value < 0:
        raise PluginArgsError(f'filterTimeout: Invalid value: "{_duration(value)}": must be zero or positive')
    return value or None
