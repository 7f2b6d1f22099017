"""The driver's opaque configuration: dra-example-driver's ``GpuConfig`` and which one applies to a device.

Why this module exists: a claim (or its DeviceClass) may carry opaque
parameters for this driver, ``gpu.resource.example.com/v1alpha1``
``GpuConfig``, choosing how a GPU is shared::

    sharing:
      strategy: TimeSlicing            # or SpacePartitioning
      timeSlicingConfig:
        interval: Long                 # Default, Short, Medium or Long
      spacePartitioningConfig:
        partitionCount: 10

The scheduler copies the class's and the claim's configs into the allocation
(``status.allocation.devices.config``, each with a ``source``). Which one
applies to a device follows dra-example-driver's ``GetOpaqueDeviceConfigs``:
configs for other drivers are skipped, class configs come before claim
configs (so the claim wins), later entries win over earlier ones, an entry
with ``requests`` applies only to those requests, and the default config
(TimeSlicing, interval Default) applies when nothing else does. Decoding is
strict (unknown fields are errors, as with dra-example-driver's strict
serializer); defaults (`normalize`) and validation (`validate`) keep
dra-example-driver's rules and messages. Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from services.api.machinery.patch.gojson import json_kind

GROUP = "gpu.resource.example.com"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "GpuConfig"

TIME_SLICING = "TimeSlicing"
SPACE_PARTITIONING = "SpacePartitioning"
INTERVALS = ("Default", "Short", "Medium", "Long")

SOURCE_CLASS = "FromClass"
SOURCE_CLAIM = "FromClaim"


class ConfigError(ValueError):
    """A configuration that cannot be applied; ``str()`` is dra-example-driver's message."""


@dataclass(frozen=True, slots=True)
class TimeSlicingConfig:
    interval: str = ""


@dataclass(frozen=True, slots=True)
class SpacePartitioningConfig:
    partition_count: int = 0


@dataclass(frozen=True, slots=True)
class GpuSharing:
    strategy: str = ""
    time_slicing: TimeSlicingConfig | None = None
    space_partitioning: SpacePartitioningConfig | None = None


@dataclass(frozen=True, slots=True)
class GpuConfig:
    sharing: GpuSharing | None = None


def default_gpu_config() -> GpuConfig:
    """``DefaultGpuConfig``: time slicing with the default interval."""
    return GpuConfig(GpuSharing(TIME_SLICING, time_slicing=TimeSlicingConfig("Default")))


# -- decoding -------------------------------------------------------------------


def _go_json(value: Any) -> str:
    return orjson.dumps(value).decode()


def _fields(obj: Any, path: str, allowed: Sequence[str]) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise ConfigError(f"json: cannot unmarshal {json_kind(obj)} into Go value of type {path}")
    for key in obj:
        if key not in allowed:
            raise ConfigError(f'strict decoding error: unknown field "{path}.{key}"')
    return obj


def _string(value: Any, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ConfigError(f"json: cannot unmarshal {json_kind(value)} into Go struct field {field} of type string")
    return value


def _int(value: Any, field: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"json: cannot unmarshal {json_kind(value)} into Go struct field {field} of type int")
    return value


def decode_gpu_config(parameters: Any) -> GpuConfig:
    """A ``GpuConfig`` from opaque parameters, decoded strictly as dra-example-driver's scheme does."""
    if isinstance(parameters, bytes | str):
        try:
            parameters = orjson.loads(parameters)
        except orjson.JSONDecodeError as err:
            raise ConfigError(f"couldn't get version/kind; json parse error: {err}") from None
    if not isinstance(parameters, Mapping):
        raise ConfigError(f"couldn't get version/kind; json parse error: not an object: {_go_json(parameters)}")
    kind, api_version = parameters.get("kind"), parameters.get("apiVersion")
    if not kind:
        raise ConfigError(f"Object 'Kind' is missing in '{_go_json(parameters)}'")
    if api_version != API_VERSION or kind != KIND:
        raise ConfigError(f'no kind "{kind}" is registered for version "{api_version}" in scheme "{GROUP}"')
    for key in parameters:
        if key not in ("apiVersion", "kind", "metadata", "sharing"):
            raise ConfigError(f'strict decoding error: unknown field "{key}"')
    raw_sharing = parameters.get("sharing")
    if raw_sharing is None:
        return GpuConfig()
    sharing = _fields(raw_sharing, "sharing", ("strategy", "timeSlicingConfig", "spacePartitioningConfig"))
    ts = sp = None
    if sharing.get("timeSlicingConfig") is not None:
        raw = _fields(sharing["timeSlicingConfig"], "sharing.timeSlicingConfig", ("interval",))
        ts = TimeSlicingConfig(_string(raw.get("interval"), "GpuConfig.sharing.timeSlicingConfig.interval"))
    if sharing.get("spacePartitioningConfig") is not None:
        raw = _fields(sharing["spacePartitioningConfig"], "sharing.spacePartitioningConfig", ("partitionCount",))
        sp = SpacePartitioningConfig(
            _int(raw.get("partitionCount"), "GpuConfig.sharing.spacePartitioningConfig.partitionCount")
        )
    strategy = _string(sharing.get("strategy"), "GpuConfig.sharing.strategy")
    return GpuConfig(GpuSharing(strategy, time_slicing=ts, space_partitioning=sp))


# -- defaults and validation ---------------------------------------------------------


def normalize(config: GpuConfig) -> GpuConfig:
    """``GpuConfig.Normalize``: fill in the defaults other settings imply."""
    sharing = config.sharing or GpuSharing(TIME_SLICING)
    if sharing.strategy == TIME_SLICING and sharing.time_slicing is None:
        sharing = GpuSharing(sharing.strategy, TimeSlicingConfig("Default"), sharing.space_partitioning)
    if sharing.strategy == SPACE_PARTITIONING and sharing.space_partitioning is None:
        sharing = GpuSharing(sharing.strategy, sharing.time_slicing, SpacePartitioningConfig(1))
    return GpuConfig(sharing)


def validate(config: GpuConfig) -> None:
    """``GpuConfig.Validate``, with its messages."""
    sharing = config.sharing
    if sharing is None:
        raise ConfigError("no sharing strategy set")
    if sharing.strategy not in (TIME_SLICING, SPACE_PARTITIONING):
        raise ConfigError(f"unknown GPU sharing strategy: {sharing.strategy}")
    if sharing.strategy == TIME_SLICING:
        interval = sharing.time_slicing.interval if sharing.time_slicing else ""
        if interval not in INTERVALS:
            raise ConfigError(f"unknown time-slice interval: {interval}")
    else:
        count = sharing.space_partitioning.partition_count if sharing.space_partitioning else 0
        if count < 0:
            raise ConfigError(f"invalid partition count: {count}")


def time_slicing_config(sharing: GpuSharing) -> TimeSlicingConfig:
    """``GetTimeSlicingConfig``: the settings, refusing space-partitioning settings alongside."""
    if sharing.strategy != TIME_SLICING:
        raise ConfigError(f"strategy is not set to '{TIME_SLICING}'")
    if sharing.space_partitioning is not None:
        raise ConfigError(f"cannot use SpacePartitioningConfig with the '{TIME_SLICING}' strategy")
    return sharing.time_slicing or TimeSlicingConfig()


def space_partitioning_config(sharing: GpuSharing) -> SpacePartitioningConfig:
    """``GetSpacePartitioningConfig``: the settings, refusing time-slicing settings alongside."""
    if sharing.strategy != SPACE_PARTITIONING:
        raise ConfigError(f"strategy is not set to '{SPACE_PARTITIONING}'")
    if sharing.time_slicing is not None:
        raise ConfigError(f"cannot use TimeSlicingConfig with the '{SPACE_PARTITIONING}' strategy")
    return sharing.space_partitioning or SpacePartitioningConfig()


# -- which config applies -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OpaqueConfig:
    """One decoded config for this driver and the requests it is limited to (empty: all)."""

    requests: tuple[str, ...]
    config: GpuConfig


def opaque_configs(driver: str, allocation_configs: Sequence[Mapping[str, Any]]) -> list[OpaqueConfig]:
    """``GetOpaqueDeviceConfigs``: this driver's configs, lowest precedence first (class, then claim)."""
    class_configs, claim_configs = [], []
    for entry in allocation_configs:
        source = entry.get("source")
        if source == SOURCE_CLASS:
            class_configs.append(entry)
        elif source == SOURCE_CLAIM:
            claim_configs.append(entry)
        else:
            raise ConfigError(f"invalid config source: {source or ''}")
    result = []
    for entry in [*class_configs, *claim_configs]:
        opaque = entry.get("opaque")
        if not isinstance(opaque, Mapping):
            raise ConfigError("only opaque parameters are supported by this driver")
        if opaque.get("driver") != driver:
            continue  # a request may be satisfiable by several drivers; others' configs are not errors
        try:
            decoded = decode_gpu_config(opaque.get("parameters"))
        except ConfigError as err:
            raise ConfigError(f"error decoding config parameters: {err}") from None
        result.append(OpaqueConfig(tuple(entry.get("requests") or ()), decoded))
    return result


def config_for_request(configs: Sequence[OpaqueConfig], request: str) -> GpuConfig:
    """The config that applies to ``request``: the last matching one, else the default."""
    for candidate in reversed(configs):
        if not candidate.requests or request in candidate.requests:
            return candidate.config
    return default_gpu_config()
