"""Binding conditions' pure rules, with the claims of kube 1.37's dynamicresources_test.go.

Case names are upstream's PreBind/Filter cases (``bound-claim-with-failed-binding``
...) where one exists; upstream's fixtures: a device ``instance-1`` with
bindingConditions ``["condition"]`` and bindingFailureConditions ``["failed"]``.
The error texts are ``ErrDeviceBindingFailed``/``ErrDeviceBindingTimeout``
wrapped as PreBind and isPodReadyForBinding wrap them.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from services.kube.times import time_text
from services.scheduler.dra.binding_conditions import (
    DeviceBindingFailedError,
    DeviceBindingStatus,
    DeviceBindingTimeoutError,
    binding_conditions_status,
    claim_ready_for_binding,
    claim_timed_out,
    failure_reason,
    format_status_line,
    has_binding_conditions,
    pending_reasons,
    pod_ready_for_binding,
    unavailable_for_binding,
    validate_binding_timeout,
)

Obj = dict[str, Any]
NOW = datetime(2026, 12, 2, 7, 0, 0, tzinfo=UTC)
TIMEOUT = 600.0
DRIVER = "some-driver"
NODE = "worker"


def result(device: str = "instance-1", *, driver: str = DRIVER, binding: bool = True) -> Obj:
    out: Obj = {"request": "req-1", "driver": driver, "pool": NODE, "device": device}
    if binding:
        out["bindingConditions"] = ["condition"]
        out["bindingFailureConditions"] = ["failed"]
    return out


def claim(
    name: str = "my-pod-my-resource",
    *,
    results: list[Obj] | None = None,
    allocated_at: datetime | None = NOW,
    conditions: list[tuple[str, str]] | None = None,
    device: str = "instance-1",
    driver: str = DRIVER,
) -> Obj:
    allocation: Obj = {"devices": {"results": results if results is not None else [result(device, driver=driver)]}}
    if allocated_at is not None:
        allocation["allocationTimestamp"] = time_text(allocated_at)
    status: Obj = {"allocation": allocation}
    if conditions is not None:
        status["devices"] = [
            {
                "driver": driver,
                "pool": NODE,
                "device": device,
                "conditions": [
                    {"type": t, "status": s, "reason": f"{t}-reason", "message": f"{t} is {s}"} for t, s in conditions
                ],
            }
        ]
    return {"metadata": {"name": name, "namespace": "default"}, "status": status}


BOUND = claim(conditions=[("condition", "True"), ("failed", "False")])
UNREADABLE_TIME = claim(allocated_at=None)
UNREADABLE_TIME["status"]["allocation"]["allocationTimestamp"] = "2026-12-02 06:00:00"  # no T, no zone: not RFC 3339
BOUND2 = claim("my-pod-my-resource-2", device="instance-2", conditions=[("condition", "True"), ("failed", "False")])
FAILED_BINDING = claim(conditions=[("condition", "False"), ("failed", "True")])
FAILED_BINDING2 = claim(
    "my-pod-my-resource-2", device="instance-2", conditions=[("condition", "False"), ("failed", "True")]
)
NO_STATUS_YET = claim(conditions=None)
TIMED_OUT = claim(allocated_at=NOW - timedelta(minutes=10, seconds=1), conditions=[])
MIXED = claim(
    allocated_at=NOW - timedelta(minutes=10, seconds=1), conditions=[("condition1", "True"), ("condition2", "False")]
)
WITHOUT_BINDING_CONDITIONS = claim(results=[result(binding=False)], conditions=None)


@pytest.mark.parametrize(
    ("name", "obj", "ready"),
    [
        ("bound-claim-with-succeeded-binding-conditions", BOUND, True),
        ("bound-claim-without-binding-conditions", WITHOUT_BINDING_CONDITIONS, True),
        ("device status not reported yet", NO_STATUS_YET, False),
        ("bound-claim-with-timed-out-binding (no conditions yet)", TIMED_OUT, False),
        ("bound-claim-with-mixed-binding-conditions", MIXED, False),
        ("unallocated claim", {"metadata": {"name": "c"}, "status": {}}, False),
    ],
)
def test_claim_ready_for_binding(name: str, obj: Obj, ready: bool) -> None:
    assert claim_ready_for_binding(obj) is ready


def test_bound_claim_with_failed_binding_is_an_error_with_the_condition_reason() -> None:
    with pytest.raises(DeviceBindingFailedError) as err:
        claim_ready_for_binding(FAILED_BINDING)
    assert str(err.value) == (
        'device binding failed: claim=my-pod-my-resource, reason=failed-reason, message="failed is True"'
    )


@pytest.mark.parametrize(
    ("name", "obj", "timeout", "timed_out"),
    [
        ("bound-claim-with-timed-out-binding", TIMED_OUT, TIMEOUT, True),
        ("just allocated", claim(conditions=[]), TIMEOUT, False),
        ("exactly at the timeout is not yet past it", claim(allocated_at=NOW - timedelta(seconds=600)), TIMEOUT, False),
        ("short bindingTimeout", claim(allocated_at=NOW - timedelta(seconds=2)), 1.0, True),
        ("no allocationTimestamp never times out", claim(allocated_at=None), 1.0, False),
        ("an allocationTimestamp that is not RFC 3339 never times out", UNREADABLE_TIME, 1.0, False),
        (
            "devices without binding conditions never time out",
            claim(results=[result(binding=False)], allocated_at=NOW - timedelta(hours=1)),
            TIMEOUT,
            False,
        ),
    ],
)
def test_claim_timed_out(name: str, obj: Obj, timeout: float, timed_out: bool) -> None:
    assert claim_timed_out(obj, timeout=timeout, now=NOW) is timed_out


@pytest.mark.parametrize(
    ("name", "obj", "unavailable"),
    [
        # Filter marks these claims unavailable on every node; PostFilter then deallocates them.
        ("bound-claim-with-failed-binding", FAILED_BINDING, True),
        ("bound-claim-with-timed-out-binding", TIMED_OUT, True),
        ("bound-claim-with-mixed-binding-conditions", MIXED, True),
        ("bound-claim-with-succeeded-binding-conditions", BOUND, False),
        ("waiting, not timed out", NO_STATUS_YET, False),
        ("bound-claim-without-binding-conditions", WITHOUT_BINDING_CONDITIONS, False),
    ],
)
def test_unavailable_for_binding(name: str, obj: Obj, unavailable: bool) -> None:
    assert unavailable_for_binding(obj, timeout=TIMEOUT, now=NOW) is unavailable


def test_multi_claims_binding_conditions_all_success() -> None:
    assert pod_ready_for_binding([BOUND, BOUND2], timeout=TIMEOUT, now=NOW)


def test_multi_claims_binding_conditions_one_fail() -> None:
    with pytest.raises(DeviceBindingFailedError, match="claim=my-pod-my-resource-2"):
        pod_ready_for_binding([BOUND, FAILED_BINDING2], timeout=TIMEOUT, now=NOW)


def test_prebind_fail_with_binding_timeout() -> None:
    """A claim allocated long ago and still not ready: isPodReadyForBinding's timeout, naming the claim."""
    with pytest.raises(DeviceBindingTimeoutError) as err:
        pod_ready_for_binding([BOUND, TIMED_OUT], timeout=TIMEOUT, now=NOW)
    assert str(err.value) == "device binding timeout: claim=my-pod-my-resource"


def test_the_wait_running_out_says_context_deadline_exceeded() -> None:
    assert str(DeviceBindingTimeoutError()) == "device binding timeout: context deadline exceeded"


def test_a_pod_is_not_ready_while_a_claim_waits() -> None:
    assert not pod_ready_for_binding([BOUND, NO_STATUS_YET], timeout=TIMEOUT, now=NOW)


def test_has_binding_conditions() -> None:
    assert has_binding_conditions([WITHOUT_BINDING_CONDITIONS, BOUND])
    assert not has_binding_conditions([WITHOUT_BINDING_CONDITIONS, {"metadata": {}, "status": {}}])


def test_list_binding_conditions_status_and_its_one_line_form() -> None:
    assert binding_conditions_status(NO_STATUS_YET) == [
        DeviceBindingStatus(DRIVER, NODE, "instance-1", pending=("condition",))
    ]
    failed = binding_conditions_status(FAILED_BINDING)
    assert failed == [DeviceBindingStatus(DRIVER, NODE, "instance-1", pending=("condition",), failed=("failed",))]
    assert binding_conditions_status(WITHOUT_BINDING_CONDITIONS) == []
    both = binding_conditions_status(NO_STATUS_YET) + failed
    assert format_status_line(both) == (
        "<driver=some-driver, pool=worker> instance-1 pending=[condition]; "
        "<driver=some-driver, pool=worker> instance-1 failed=[failed] pending=[condition]"
    )


def test_explain_reasons() -> None:
    assert pending_reasons(NO_STATUS_YET) == [
        "binding condition pending: <driver=some-driver, pool=worker> instance-1 pending=[condition]"
    ]
    assert pending_reasons(FAILED_BINDING)[0].startswith("binding condition failed: ")
    assert pending_reasons(BOUND) == []
    assert failure_reason('running PreBind plugin "DynamicResources": device binding timeout: claim=c') == (
        "binding condition failed: not all True within bindingTimeout"
    )
    assert failure_reason('device binding failed: claim=c, reason=r, message="m"') == (
        "binding condition failed: a bindingFailureCondition is True"
    )
    assert failure_reason("claim default/c got deleted in the meantime") is None


@pytest.mark.parametrize(
    ("seconds", "enabled", "refused"),
    [
        (None, True, None),
        (None, False, None),
        (1.0, True, None),
        (600.0, True, None),
        (0.5, True, 'bindingTimeout: Invalid value: "0.5s": must be at least 1 second'),
        (
            10.0,
            False,
            "bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus "
            "feature gate is disabled",
        ),
    ],
)
def test_validate_binding_timeout(seconds: float | None, enabled: bool, refused: str | None) -> None:
    assert validate_binding_timeout(seconds, enabled=enabled) == refused


def test_inputs_are_not_modified() -> None:
    before = copy.deepcopy(FAILED_BINDING)
    unavailable_for_binding(FAILED_BINDING, timeout=TIMEOUT, now=NOW)
    binding_conditions_status(FAILED_BINDING)
    assert before == FAILED_BINDING
