"""Event validation by the version written through (pkg/apis/core/validation/events.go).

core/v1 writes get legacyValidateEvent only; events.k8s.io/v1 writes get the
strict rules of ValidateEventCreate/ValidateEventUpdate too. Events are
validated in their stored core/v1 form, so paths name core's fields.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.api.admission.validation.event import validate_event, validate_event_update

V1 = "events.k8s.io/v1"
MICRO = "2026-12-02T08:00:00.000000Z"


def qualified_errors(path: str) -> list[str]:
    return [
        f'{path}: Invalid value: "": name part must be non-empty',
        f"{path}: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]


def event(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web-0.scheduled", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web-0"},
        "eventTime": MICRO,
        "reportingComponent": "default-scheduler",
        "reportingInstance": "sched-1",
        "action": "Binding",
        "reason": "Scheduled",
        "type": "Normal",
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


@pytest.mark.parametrize(
    ("fields", "version", "expected"),
    [
        ({}, V1, []),
        ({}, "v1", []),
        # followed by ValidateQualifiedName's errors for the empty name, as in Kubernetes
        (
            {"reportingComponent": None},
            V1,
            ["reportingController: Required value", *qualified_errors("reportingController")],
        ),
        (
            {"reportingComponent": None},
            "v1",
            ["reportingComponent: Required value", *qualified_errors("reportingComponent")],
        ),
        ({"action": None}, V1, ["action: Required value"]),
        ({"type": "Odd"}, V1, ['type: Invalid value: "": has invalid value: Odd']),
        ({"type": "Odd"}, "v1", []),  # core/v1: legacy rules only
        ({"count": 2}, V1, ['count: Invalid value: "": needs to be unset']),
        ({"firstTimestamp": "2026-12-02T08:00:00Z"}, V1, ['firstTimestamp: Invalid value: "": needs to be unset']),
        ({"source": {"component": "kubelet"}}, V1, ['source: Invalid value: "": needs to be unset']),
        (
            {"series": {"count": 1, "lastObservedTime": MICRO}},
            V1,
            ['series.count: Invalid value: "": should be at least 2'],
        ),
        (
            {"eventTime": None},
            V1,
            ["eventTime: Required value"],
        ),
    ],
)
def test_create(fields: dict[str, Any], version: str, expected: list[str]) -> None:
    assert [str(e) for e in validate_event(event(**fields), request_version=version)] == expected


def test_update_through_events_v1_keeps_scalar_fields() -> None:
    old = event()
    new = event(reason="Moved")
    assert [str(e) for e in validate_event_update(new, old, request_version=V1)] == [
        'reason: Invalid value: "Moved": field is immutable'
    ]
    assert validate_event_update(new, old, request_version="v1") == []
