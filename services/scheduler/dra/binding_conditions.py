"""Device binding conditions (DRADeviceBindingConditions): is a claim's allocation ready for its pod to bind?

A device may need something done before a pod can use it (a fabric attach,
say). Its slice names that in ``bindingConditions``; the allocator copies
them, with ``bindingFailureConditions``, into the claim's allocation result,
and the device's driver reports progress as conditions in the claim's
``status.devices[]``. The scheduler binds the pod only once every binding
condition is True there, gives up when a failure condition turns True or
``bindingTimeout`` has passed since ``allocation.allocationTimestamp``, and the
next attempt then deallocates the claim.

Kubernetes 1.37's rules (pkg/scheduler/framework/plugins/dynamicresources,
``isClaimReadyForBinding``, ``isClaimTimeout``, ``isPodReadyForBinding``,
``hasBindingConditions``, ``listBindingConditionsStatus``) and error texts,
pure: claims and a time in, verdicts out. The waiting itself is in
`services.scheduler.dra.binding_wait`; ``draplane explain`` words the
per-device summary with `pending_reasons`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from services.api.machinery.field_errors import go_quote
from services.kube.resourceclaim import allocation
from services.kube.times import parse_time

DEFAULT_BINDING_TIMEOUT = 600.0
"""``DynamicResourcesBindingTimeoutDefault``: ten minutes."""
MIN_BINDING_TIMEOUT = 1.0
"""``ValidateDynamicResourcesArgs``: bindingTimeout must be at least 1 second."""

ERR_DEVICE_BINDING_TIMEOUT = "device binding timeout"
ERR_DEVICE_BINDING_FAILED = "device binding failed"
CONTEXT_DEADLINE_EXCEEDED = "context deadline exceeded"  # what Go's wait.PollUntilContextTimeout returns


class DeviceBindingError(Exception):
    """A claim cannot become ready for binding in this attempt; ``str()`` is Kubernetes' error text."""


class DeviceBindingFailedError(DeviceBindingError):
    """A bindingFailureCondition is True (``ErrDeviceBindingFailed``)."""

    def __init__(self, claim_name: str, reason: str, message: str) -> None:
        super().__init__(
            f"{ERR_DEVICE_BINDING_FAILED}: claim={claim_name}, reason={reason}, message={go_quote(message)}"
        )


class DeviceBindingTimeoutError(DeviceBindingError):
    """bindingTimeout passed (``ErrDeviceBindingTimeout``): since the allocation, or while PreBind waited."""

    def __init__(self, claim_name: str = "") -> None:
        detail = f"claim={claim_name}" if claim_name else CONTEXT_DEADLINE_EXCEEDED
        super().__init__(f"{ERR_DEVICE_BINDING_TIMEOUT}: {detail}")


def validate_binding_timeout(seconds: float | None, *, enabled: bool) -> str | None:
    """Why a ``bindingTimeout`` (seconds; None: unset) is refused, in ``ValidateDynamicResourcesArgs``' words.

    ``enabled``: DRADeviceBindingConditions (and DRAResourceClaimDeviceStatus) on;
    with them off, setting the field at all is an error.
    """
    if seconds is None:
        return None
    if not enabled:
        return (
            "bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus "
            "feature gate is disabled"
        )
    if seconds < MIN_BINDING_TIMEOUT:
        return f'bindingTimeout: Invalid value: "{seconds:g}s": must be at least 1 second'
    return None


def _results(claim: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    alloc = allocation(claim)
    if alloc is None:
        return ()
    return (alloc.get("devices") or {}).get("results") or ()


def _meta_name(claim: Mapping[str, Any]) -> str:
    return str((claim.get("metadata") or {}).get("name", ""))


def has_binding_conditions(claims: Iterable[Mapping[str, Any]]) -> bool:
    """Whether any allocated device of these claims has binding conditions (``hasBindingConditions``)."""
    return any(result.get("bindingConditions") for claim in claims for result in _results(claim))


def allocated_device_status(claim: Mapping[str, Any], result: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``status.devices`` entry of one allocated device (same driver, pool and device), or None."""
    for device in (claim.get("status") or {}).get("devices") or ():
        if (
            device.get("device") == result.get("device")
            and device.get("driver") == result.get("driver")
            and device.get("pool") == result.get("pool")
        ):
            return device
    return None


def _condition(device_status: Mapping[str, Any], condition_type: str) -> Mapping[str, Any] | None:
    """``meta.FindStatusCondition``: the condition of that type, or None."""
    for condition in device_status.get("conditions") or ():
        if condition.get("type") == condition_type:
            return condition
    return None


def _is_true(device_status: Mapping[str, Any], condition_type: str) -> bool:
    """``meta.IsStatusConditionTrue``."""
    condition = _condition(device_status, condition_type)
    return condition is not None and condition.get("status") == "True"


def claim_ready_for_binding(claim: Mapping[str, Any]) -> bool:
    """True when every binding condition of every allocated device is True (also when there are none).

    False for an unallocated claim and for a device whose status the driver has
    not reported yet. Raises `DeviceBindingFailedError` when a failure
    condition is True (``isClaimReadyForBinding``).
    """
    if allocation(claim) is None:
        return False
    for result in _results(claim):
        conditions = result.get("bindingConditions") or ()
        if not conditions:
            continue
        device_status = allocated_device_status(claim, result)
        if device_status is None:
            return False
        for failure in result.get("bindingFailureConditions") or ():
            failed = _condition(device_status, failure)
            if failed is not None and failed.get("status") == "True":
                raise DeviceBindingFailedError(
                    _meta_name(claim), str(failed.get("reason") or ""), str(failed.get("message") or "")
                )
        if not all(_is_true(device_status, c) for c in conditions):
            return False
    return True


def claim_timed_out(claim: Mapping[str, Any], *, timeout: float, now: datetime) -> bool:
    """Whether ``timeout`` seconds passed since the allocation of a claim with binding conditions (``isClaimTimeout``).

    A claim without ``allocationTimestamp`` never times out here.
    """
    alloc = allocation(claim)
    if alloc is None:
        return False
    allocated_at = parse_time(alloc.get("allocationTimestamp"))
    if allocated_at is None:
        return False
    if not any(result.get("bindingConditions") is not None for result in _results(claim)):
        return False
    return allocated_at + timedelta(seconds=timeout) < now


def pod_ready_for_binding(claims: Iterable[Mapping[str, Any]], *, timeout: float, now: datetime) -> bool:
    """Whether all the pod's claims are ready for binding (``isPodReadyForBinding`` on the claims as they are now).

    Raises `DeviceBindingFailedError` for a failure condition, and
    `DeviceBindingTimeoutError` for a claim not ready whose timeout has passed.
    """
    for claim in claims:
        if not claim_ready_for_binding(claim):
            if claim_timed_out(claim, timeout=timeout, now=now):
                raise DeviceBindingTimeoutError(_meta_name(claim))
            return False
    return True


def unavailable_for_binding(claim: Mapping[str, Any], *, timeout: float, now: datetime) -> bool:
    """Filter's verdict on an allocated claim: failed, or not ready and timed out (PostFilter then deallocates it)."""
    try:
        ready = claim_ready_for_binding(claim)
    except DeviceBindingFailedError:
        return True
    return not ready and claim_timed_out(claim, timeout=timeout, now=now)


@dataclass(frozen=True, slots=True)
class DeviceBindingStatus:
    """One allocated device with binding conditions: those not True yet, and failure conditions that are True."""

    driver: str
    pool: str
    device: str
    pending: tuple[str, ...] = ()
    failed: tuple[str, ...] = field(default=())

    def line(self) -> str:
        """``formatBCStatusOneLine``'s part for one device."""
        text = f"<driver={self.driver}, pool={self.pool}> {self.device}"
        if self.failed:
            text += f" failed=[{','.join(self.failed)}]"
        if self.pending:
            text += f" pending=[{','.join(self.pending)}]"
        return text


def binding_conditions_status(claim: Mapping[str, Any]) -> list[DeviceBindingStatus]:
    """Per allocated device with binding conditions: what is pending, what failed (``listBindingConditionsStatus``)."""
    out: list[DeviceBindingStatus] = []
    for result in _results(claim):
        conditions = tuple(str(c) for c in result.get("bindingConditions") or ())
        if not conditions:
            continue
        ids = (str(result.get("driver", "")), str(result.get("pool", "")), str(result.get("device", "")))
        device_status = allocated_device_status(claim, result)
        if device_status is None:
            out.append(DeviceBindingStatus(*ids, pending=conditions))
            continue
        failed = tuple(str(c) for c in result.get("bindingFailureConditions") or () if _is_true(device_status, c))
        pending = tuple(c for c in conditions if not _is_true(device_status, c))
        out.append(DeviceBindingStatus(*ids, pending=pending, failed=failed))
    return out


def format_status_line(devices: Iterable[DeviceBindingStatus]) -> str:
    """``formatBCStatusOneLine``: devices joined by ``; ``."""
    return "; ".join(d.line() for d in devices)


def pending_reasons(claim: Mapping[str, Any]) -> list[str]:
    """For ``draplane explain``: one line per device whose binding condition is pending or failed."""
    lines = []
    for device in binding_conditions_status(claim):
        if device.failed:
            lines.append(f"binding condition failed: {device.line()}")
        elif device.pending:
            lines.append(f"binding condition pending: {device.line()}")
    return lines


def failure_reason(message: str) -> str | None:
    """For ``draplane explain``: what a failed binding's message says about binding conditions, or None."""
    if ERR_DEVICE_BINDING_FAILED + ":" in message:
        return "binding condition failed: a bindingFailureCondition is True"
    if ERR_DEVICE_BINDING_TIMEOUT + ":" in message:
        return "binding condition failed: not all True within bindingTimeout"
    return None
