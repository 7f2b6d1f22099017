"""What preparing a claim means for this driver, decided without doing it.

Why this module exists: dra-example-driver's ``prepareDevices`` and
``applyConfig`` decide, from an allocated claim, which of the node's devices
the claim gets, which ``GpuConfig`` applies to each, which environment each
CDI device injects (``GPU_DEVICE_<n>=gpu-<n>`` plus the sharing settings) and
which CDI ids the node agent receives per request. `plan_claim` does that as
a pure function so it can be table-tested; `services.driver.prepare` writes
the result (CDI file, checkpoint). Error messages are dra-example-driver's
(``prepare failed: claim not yet allocated`` ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from typing import Any

from services.driver import cdi
from services.driver.config import (
    ConfigError,
    GpuConfig,
    config_for_request,
    normalize,
    opaque_configs,
    space_partitioning_config,
    time_slicing_config,
    validate,
)
from services.kube.quantity import parse_quantity

_ENV_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


class PrepareError(Exception):
    """A claim this driver cannot prepare; ``str()`` is the message the node agent reports."""


@dataclass(frozen=True, slots=True)
class PreparedDevice:
    """One prepared device: the requests it serves, where it is, its CDI ids and environment."""

    requests: tuple[str, ...]
    pool: str
    device: str
    cdi_device_ids: tuple[str, ...]
    env: tuple[str, ...] = ()
    share_id: str = ""
    admin_access: bool = False

    def to_wire(self) -> dict[str, Any]:
        """The kubelet plugin API's ``Device`` (plus the environment, for the checkpoint)."""
        wire: dict[str, Any] = {
            "requestNames": list(self.requests),
            "poolName": self.pool,
            "deviceName": self.device,
            "cdiDeviceIDs": list(self.cdi_device_ids),
            "env": list(self.env),
        }
        if self.share_id:
            wire["shareID"] = self.share_id
        if self.admin_access:
            wire["adminAccess"] = True
        return wire

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any]) -> PreparedDevice:
        return cls(
            requests=tuple(raw.get("requestNames") or ()),
            pool=str(raw.get("poolName") or ""),
            device=str(raw.get("deviceName") or ""),
            cdi_device_ids=tuple(raw.get("cdiDeviceIDs") or ()),
            env=tuple(raw.get("env") or ()),
            share_id=str(raw.get("shareID") or ""),
            admin_access=bool(raw.get("adminAccess")),
        )


@dataclass(frozen=True, slots=True)
class PreparedClaim:
    """Everything a prepared claim consists of on this node."""

    uid: str
    namespace: str
    name: str
    devices: tuple[PreparedDevice, ...]

    def cdi_spec(self, driver: str) -> dict[str, Any]:
        return cdi.claim_spec(
            driver=driver,
            claim_uid=self.uid,
            devices=[(cdi_device_id(d.device, d.share_id), d.env) for d in self.devices],
        )


def env_suffix(device: str) -> str:
    """The ``<n>`` of ``GPU_DEVICE_<n>``: dra-example-driver's ``device[4:]`` for ``gpu-<n>``, made env-safe."""
    base = device[4:] if device.startswith("gpu-") else device
    return _ENV_UNSAFE.sub("_", base).upper()


def is_nic(device: str) -> bool:
    """A NIC of the net profile (``nic-<n>``): no GPU environment."""
    return device.startswith("nic-")


def cdi_device_id(device: str, share_id: str) -> str:
    """The example driver's ``GetCDIDeviceID``: ``<device>-<shareID>`` for one share of a shared device."""
    return f"{device}-{share_id}" if share_id else device


def consumed_capacity_env(device: str, result: Mapping[str, Any]) -> list[str]:
    """What one allocation got (``consumedCapacity``): ``GPU_DEVICE_<n>_MEMORY``, ``NET_DEVICE_<n>_INGRESS_RATE``."""
    consumed = result.get("consumedCapacity") or {}
    n = env_suffix(device)
    env = []
    if is_nic(device):
        nic = _ENV_UNSAFE.sub("_", device[4:]).upper()
        for name, suffix in (("ingressBandwidth", "INGRESS_RATE"), ("egressBandwidth", "EGRESS_RATE")):
            if name in consumed:
                rate = parse_quantity(str(consumed[name])).int_value  # the example driver prints AsDec
                env.append(f"NET_DEVICE_{nic}_{suffix}={rate}")
        return env
    for name in ("memory", "compute"):
        if name in consumed:
            env.append(f"GPU_DEVICE_{n}_{name.upper()}={consumed[name]}")
    return env


def device_env(device: str, config: GpuConfig) -> list[str]:
    """``applyConfig`` for one device: its environment under ``config`` (already normalized)."""
    n = env_suffix(device)
    env = [f"GPU_DEVICE_{n}={device}"]
    sharing = config.sharing
    if sharing is None:
        return env
    env.append(f"GPU_DEVICE_{n}_SHARING_STRATEGY={sharing.strategy}")
    try:
        if sharing.strategy == "TimeSlicing":
            env.append(f"GPU_DEVICE_{n}_TIMESLICE_INTERVAL={time_slicing_config(sharing).interval}")
        elif sharing.strategy == "SpacePartitioning":
            env.append(f"GPU_DEVICE_{n}_PARTITION_COUNT={space_partitioning_config(sharing).partition_count}")
    except ConfigError as err:
        what = "time slicing" if sharing.strategy == "TimeSlicing" else "space partitioning"
        raise ConfigError(f"unable to get {what} config for device {device}: {err}") from None
    return env


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta: Mapping[str, Any] = obj.get("metadata") or {}
    return meta


def plan_claim(
    claim: Mapping[str, Any],
    *,
    driver: str,
    node: str,
    allocatable: Container[str],
) -> PreparedClaim:
    """The prepared form of ``claim``'s devices of this driver on ``node``.

    Raises `PrepareError` when the claim is not allocated, names a device this
    node does not have, or carries configuration that does not decode or
    validate.
    """
    meta = _meta(claim)
    uid = str(meta.get("uid", ""))
    allocation = (claim.get("status") or {}).get("allocation")
    if not allocation:
        raise PrepareError("prepare failed: claim not yet allocated")
    devices = allocation.get("devices") or {}
    try:
        configs = opaque_configs(driver, devices.get("config") or ())
    except ConfigError as err:
        raise PrepareError(f"prepare failed: error getting opaque device configs: {err}") from None
    mine = [r for r in devices.get("results") or () if r.get("driver") == driver]
    for result in mine:
        if result.get("pool") != node or result.get("device") not in allocatable:
            raise PrepareError(f"prepare failed: requested GPU is not allocatable: {result.get('device')}")
    applied: dict[GpuConfig, GpuConfig] = {}  # config -> normalized and validated
    prepared: dict[tuple[str, str], PreparedDevice] = {}
    for result in mine:
        request, device = str(result.get("request", "")), str(result["device"])
        share = str(result.get("shareID") or "")
        key = config_for_request(configs, request)
        if key not in applied:
            normalized = normalize(key)
            try:
                validate(normalized)
            except ConfigError as err:
                raise PrepareError(f"prepare failed: error validating GPU config: {err}") from None
            applied[key] = normalized
        try:
            env = ([] if is_nic(device) else device_env(device, applied[key])) + consumed_capacity_env(device, result)
        except ConfigError as err:
            raise PrepareError(f"prepare failed: error applying GPU config: {err}") from None
        existing = prepared.get((device, share))
        if existing is not None:  # one device serving several requests (admin access)
            prepared[(device, share)] = PreparedDevice(
                (*existing.requests, request),
                existing.pool,
                device,
                existing.cdi_device_ids,
                existing.env,
                existing.share_id,
                existing.admin_access,
            )
            continue
        admin = bool(result.get("adminAccess"))
        # dra-example-driver's claim edits: the claim's UID and whether this is an admin-access allocation.
        claim_env = (
            f"GPU_DEVICE_{env_suffix(device)}_RESOURCE_CLAIM={uid}",
            f"DRA_ADMIN_ACCESS={'true' if admin else 'false'}",
            *env,
        )
        cdi_device = cdi_device_id(device, share)
        prepared[(device, share)] = PreparedDevice(
            (request,),
            str(result.get("pool", "")),
            device,
            tuple(cdi.claim_cdi_ids(driver, uid, cdi_device)),
            claim_env,
            share,
            admin,
        )
    return PreparedClaim(uid, str(meta.get("namespace", "")), str(meta.get("name", "")), tuple(prepared.values()))


def reserved_on_node(
    claim: Mapping[str, Any], *, node: str, pod: Callable[[str, str], Mapping[str, Any] | None]
) -> bool:
    """Whether ``claim`` is reserved for a pod bound to ``node`` (``pod(namespace, name)`` looks pods up)."""
    namespace = str(_meta(claim).get("namespace", ""))
    for ref in (claim.get("status") or {}).get("reservedFor") or ():
        if ref.get("resource") != "pods" or ref.get("apiGroup"):
            continue
        found = pod(namespace, str(ref.get("name", "")))
        if found is None or _meta(found).get("uid") != ref.get("uid"):
            continue
        if (found.get("spec") or {}).get("nodeName") == node:
            return True
    return False
