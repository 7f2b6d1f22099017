"""A prioritized list's subrequests: their defaults, and results that name ``<request>/<subrequest>``.

Kubernetes (v1.37 ``SetDefaults_DeviceSubRequest``, validation's
``requestNames``) defaults each subrequest, not the list itself, and lets an
allocation result, constraint or config name a subrequest as
``<request>/<subrequest>``. The scheduler writes such results in PreBind.
"""

from __future__ import annotations

import copy
from typing import Any

from services.api.admission.defaults import apply_defaults
from services.api.admission.validation.resource_claim import (
    validate_resource_claim,
    validate_resource_claim_status_update,
)
from services.api.types.registry import by_kind
from services.kube.resource_limits import LIMITS_1_37
from tests.unit.validation.objects import claim, render

Obj = dict[str, Any]


def prioritized_claim() -> Obj:
    obj = claim()
    obj["apiVersion"] = "resource.k8s.io/v1beta1"
    obj["spec"]["devices"] = {
        "requests": [
            {
                "name": "gpu",
                "firstAvailable": [
                    {"name": "big", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2},
                    {"name": "one", "deviceClassName": "gpu.example.com"},
                ],
            }
        ]
    }
    return obj


def test_defaults_go_to_the_subrequests_not_the_list() -> None:
    obj = prioritized_claim()
    apply_defaults(by_kind("resource.k8s.io", "ResourceClaim"), obj)
    (request,) = obj["spec"]["devices"]["requests"]
    assert "allocationMode" not in request and "count" not in request
    assert [(s["allocationMode"], s["count"]) for s in request["firstAvailable"]] == [
        ("ExactCount", 2),
        ("ExactCount", 1),
    ]
    assert render(validate_resource_claim(obj, limits=LIMITS_1_37)) == []


def result(request: str) -> Obj:
    return {"request": request, "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}


def test_a_result_may_name_a_subrequest() -> None:
    old = prioritized_claim()
    apply_defaults(by_kind("resource.k8s.io", "ResourceClaim"), old)
    for name in ("gpu/one", "gpu"):
        new = copy.deepcopy(old)
        new["status"] = {"allocation": {"devices": {"results": [result(name)]}}}
        assert render(validate_resource_claim_status_update(new, old, limits=LIMITS_1_37)) == [], name
    # An unknown subrequest stays refused (1.37 words this error differently; not reproduced here).
    new = copy.deepcopy(old)
    new["status"] = {"allocation": {"devices": {"results": [result("gpu/two")]}}}
    errors = render(validate_resource_claim_status_update(new, old, limits=LIMITS_1_37))
    assert errors[-1] == (
        'status.allocation.devices.results[0].request: Invalid value: "gpu/two": must be the name of a request in the claim'
    )
