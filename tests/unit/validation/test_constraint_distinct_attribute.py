"""A constraint names ``matchAttribute`` or, from 1.34 (DRAConsumableCapacity), ``distinctAttribute``.

Kubernetes 1.37.2 ``validateDeviceConstraint`` (pkg/apis/resource/validation):
the first of the two that is set is validated as a fully qualified name; with
neither, the error is on the constraint itself while DRAConsumableCapacity is on
(1.37's default), on ``matchAttribute`` before.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.api.admission.validation.resource_claim import validate_resource_claim
from services.kube.resource_limits import LIMITS_1_31, LIMITS_1_37, ResourceLimits
from tests.unit.validation.objects import claim, render

C0 = "spec.devices.constraints[0]"

CASES: list[tuple[str, ResourceLimits, dict[str, Any], list[str]]] = [
    ("distinctAttribute", LIMITS_1_37, {"distinctAttribute": "dra.example.com/index"}, []),
    ("matchAttribute", LIMITS_1_37, {"matchAttribute": "dra.example.com/numa"}, []),
    (
        "distinctAttribute without domain",
        LIMITS_1_37,
        {"distinctAttribute": "index"},
        [f"{C0}.distinctAttribute.domain: Required value: must include a prefix"],
    ),
    (
        "neither at 1.37",
        LIMITS_1_37,
        {},
        [
            f'{C0}: Required value: exactly one of "matchAttribute" or "distinctAttribute" is required, '
            "but multiple fields are set"
        ],
    ),
    ("neither at 1.31", LIMITS_1_31, {}, [f"{C0}.matchAttribute: Required value"]),
]


@pytest.mark.parametrize(("limits", "fields", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_constraint(limits: ResourceLimits, fields: dict[str, Any], expected: list[str]) -> None:
    obj = claim()
    obj["apiVersion"] = "resource.k8s.io/v1beta1"
    obj["spec"]["devices"]["constraints"] = [{"requests": ["gpu"], **fields}]
    assert render(validate_resource_claim(obj, limits=limits)) == expected
