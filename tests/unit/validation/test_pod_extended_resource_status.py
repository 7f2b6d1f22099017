"""``pod.status.extendedResourceClaimStatus`` (1.37, DRAExtendedResource): validation and the gate's field drop.

Messages as kube 1.37's validatePodExtendedResourceClaimStatus words them
(pkg/apis/core/validation/validation.go), including its ``requestName`` path
without the mapping's index; the drop as pkg/api/pod's dropDisabledPodStatusFields.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from services.api.admission.gated_fields import drop_disabled_fields
from services.api.admission.validation import validate_status_update
from services.kube.feature_gates import FeatureGates

from .objects import BAD_NAME, POD, SUBDOMAIN_MSG, Obj, pod, render

PATH = "status.extendedResourceClaimStatus"
GOOD_MAPPING = {"containerName": "main", "resourceName": "cpu", "requestName": "container-0-request-0"}


def with_status(value: Any) -> tuple[Obj, Obj]:
    old = pod()
    new = copy.deepcopy(old)
    new["status"]["extendedResourceClaimStatus"] = value
    return new, old


CASES: list[tuple[str, Any, list[str]]] = [
    ("valid", {"requestMappings": [GOOD_MAPPING], "resourceClaimName": "trainer-0-extended-resources-x"}, []),
    (
        "no mappings, no claim name",
        {"requestMappings": []},
        [
            f"{PATH}.requestMappings: Required value: at least one request mapping is required",
            f"{PATH}.resourceClaimName: Required value",
        ],
    ),
    (
        "unknown container",
        {"requestMappings": [{**GOOD_MAPPING, "containerName": "other"}], "resourceClaimName": "c"},
        [
            f'{PATH}.requestMappings[0].containerName: Invalid value: "other": must match the name of an entry in '
            "spec.initContainers.name or spec.containers.name"
        ],
    ),
    (
        "resource the container does not request",
        {"requestMappings": [{**GOOD_MAPPING, "resourceName": "example.com/gpu"}], "resourceClaimName": "c"},
        [
            f'{PATH}.requestMappings[0].resourceName: Invalid value: "example.com/gpu": must match the extended '
            "resource name of an entry in spec.initContainers.resources.requests or "
            "spec.containers.resources.requests"
        ],
    ),
    (
        "duplicate mapping",
        {"requestMappings": [GOOD_MAPPING, GOOD_MAPPING], "resourceClaimName": "c"},
        [
            f'{PATH}.requestMappings[1].containerName: Duplicate value: "main"',
            f'{PATH}.requestMappings[1].resourceName: Duplicate value: "cpu"',
            f'{PATH}.requestMappings[1].requestName: Duplicate value: "container-0-request-0"',
        ],
    ),
    (
        "bad claim name",
        {"requestMappings": [GOOD_MAPPING], "resourceClaimName": BAD_NAME},
        [f'{PATH}.resourceClaimName: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
]


@pytest.mark.parametrize(("value", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_status_update(value: Any, expected: list[str]) -> None:
    new, old = with_status(value)
    assert render(validate_status_update(POD, new, old)) == expected


def test_bad_request_name_is_reported_without_the_index() -> None:
    new, old = with_status({"requestMappings": [{**GOOD_MAPPING, "requestName": "Bad_Name"}], "resourceClaimName": "c"})
    [error] = render(validate_status_update(POD, new, old))
    assert error.startswith(f'{PATH}.requestName: Invalid value: "Bad_Name": a lowercase RFC 1123 label')


@pytest.mark.parametrize(
    ("gates", "old_has_it", "kept"),
    [
        (FeatureGates(release="1.37"), False, True),  # GA and locked on
        (FeatureGates(release="1.31"), False, False),  # no such gate: off
        (FeatureGates(release="1.31"), True, True),
    ],
)
def test_the_field_is_dropped_while_the_gate_is_off_unless_in_use(
    gates: FeatureGates, old_has_it: bool, kept: bool
) -> None:
    value = {"requestMappings": [GOOD_MAPPING], "resourceClaimName": "c"}
    new, old = with_status(value)
    if old_has_it:
        old["status"]["extendedResourceClaimStatus"] = value
    drop_disabled_fields(POD, new, old, gates)
    assert ("extendedResourceClaimStatus" in new["status"]) is kept
