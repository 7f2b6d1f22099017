"""Objects of every kind draplane serves, at every served version, for the protobuf codec's tests.

Each entry is a name and a JSON-shaped object: an object with every field
set (`samples.exemplar` of the version's model) and the realistic samples
converted to each version, a list of each kind, and the meta.k8s.io kinds
that travel in protobuf (Status, DeleteOptions, PartialObjectMetadata[List],
the discovery documents). ``ops/proto_vectors.py`` has Go encode them into
``tests/data/protobuf/``; ``tests/unit/protobuf`` checks the codec against
Go's bytes and Go's JSON.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from services.api.machinery import conversion
from services.api.types import model_for, registry
from tests.support import samples, stored_kinds

Obj = dict[str, Any]

# Realistic objects in their storage form, per (group, kind).
_REALISTIC: dict[tuple[str, str], Callable[[], Obj]] = {
    ("", "Pod"): samples.pod,
    ("", "Node"): samples.node,
    ("", "Namespace"): samples.namespace,
    ("", "Event"): samples.event,
    ("coordination.k8s.io", "Lease"): samples.lease,
    ("resource.k8s.io", "DeviceClass"): samples.device_class,
    ("resource.k8s.io", "ResourceClaim"): samples.resource_claim,
    ("resource.k8s.io", "ResourceClaimTemplate"): samples.resource_claim_template,
    ("resource.k8s.io", "ResourceSlice"): lambda: samples.resource_slice(devices=3),
    ("resource.k8s.io", "PodSchedulingContext"): samples.pod_scheduling_context,
    **{
        (rt.group, kind): make
        for kind, make in stored_kinds.STORED_KINDS.items()
        for rt in registry.RESOURCES
        if rt.kind == kind
    },
}


def _api_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


def device_taint_rule() -> Obj:
    """A DeviceTaintRule (resource.k8s.io/v1, 1.37) in its storage form."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {
            "name": "gpu-maintenance",
            "uid": "5d0c1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f",
            "resourceVersion": "77",
            "generation": 1,
            "creationTimestamp": "2024-08-13T09:21:07Z",
        },
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "worker-1", "device": "gpu-0"},
            "taint": {
                "key": "example.com/maintenance",
                "value": "planned",
                "effect": "NoSchedule",
                "timeAdded": "2024-08-13T09:21:07Z",
            },
        },
    }


def _realistic(rt: registry.ResourceType, version: str) -> Obj | None:
    if rt.kind == "DeviceTaintRule":
        stored = device_taint_rule()
    elif rt.view_of is not None:
        storage = registry.storage_of(rt)
        make = _REALISTIC.get((storage.group, storage.kind))
        if make is None:
            return None
        qualified = registry.qualified_version(rt, version)
        return conversion.from_storage(make(), group=storage.group, kind=storage.kind, version=qualified)
    else:
        make = _REALISTIC.get((rt.group, rt.kind))
        if make is None:
            return None
        stored = make()
    return conversion.from_storage(stored, group=rt.group, kind=rt.kind, version=version)


def served() -> list[tuple[str, str, str]]:
    """(group, version, kind) of every kind draplane serves, at every version it serves it."""
    return [(rt.group, v, rt.kind) for rt in registry.RESOURCES for v in rt.versions]


def objects() -> list[tuple[str, Obj]]:
    """Every corpus entry: ``(name, object)``, names unique."""
    out: list[tuple[str, Obj]] = []
    for rt in registry.RESOURCES:
        for version in rt.versions:
            api_version = _api_version(rt.group, version)
            stem = f"{rt.group or 'core'}.{version}.{rt.kind}"
            model = model_for(rt.group, version, rt.kind)
            if model is not None:
                out.append(
                    (f"{stem}.every-field", {**samples.exemplar(model), "apiVersion": api_version, "kind": rt.kind})
                )
            obj = _realistic(rt, version)
            if obj is None:
                continue
            obj = {
                "apiVersion": api_version,
                "kind": rt.kind,
                **{k: v for k, v in obj.items() if k not in ("apiVersion", "kind")},
            }
            out.append((f"{stem}.sample", obj))
            item = {k: copy.deepcopy(v) for k, v in obj.items() if k not in ("apiVersion", "kind")}
            out.append(
                (
                    f"{stem}.list",
                    {
                        "apiVersion": api_version,
                        "kind": rt.list_kind,
                        "metadata": {"resourceVersion": "1043", "continue": "eyJ2IjoxfQ", "remainingItemCount": 2},
                        "items": [item, item],
                    },
                )
            )
    out += _bodies()
    out += [(f"meta.{name}", obj) for name, obj in _meta_objects()]
    return out


def _bodies() -> list[tuple[str, Obj]]:
    """Kinds that are only request or response bodies: pods/binding (kube-scheduler posts it in protobuf) and the
    reviews draplane answers."""
    out: list[tuple[str, Obj]] = [("core.v1.Binding.sample", samples.binding())]
    for group, version, kind in (
        ("", "v1", "Binding"),
        ("authentication.k8s.io", "v1", "SelfSubjectReview"),
        ("authorization.k8s.io", "v1", "SelfSubjectAccessReview"),
        ("authorization.k8s.io", "v1", "SelfSubjectRulesReview"),
    ):
        model = model_for(group, version, kind)
        assert model is not None, kind
        api_version = _api_version(group, version)
        out.append(
            (
                f"{group or 'core'}.{version}.{kind}.every-field",
                {**samples.exemplar(model), "apiVersion": api_version, "kind": kind},
            )
        )
    return out


def _meta_objects() -> list[tuple[str, Obj]]:
    claim_meta = samples.resource_claim()["metadata"]
    return [
        (
            "status-not-found",
            {
                "apiVersion": "v1",
                "kind": "Status",
                "metadata": {},
                "status": "Failure",
                "message": 'pods "web-0" not found',
                "reason": "NotFound",
                "details": {"name": "web-0", "kind": "pods"},
                "code": 404,
            },
        ),
        (
            "status-invalid",
            {
                "apiVersion": "v1",
                "kind": "Status",
                "metadata": {},
                "status": "Failure",
                "message": 'ResourceClaim.resource.k8s.io "gpu" is invalid: spec.devices.requests[0].name: Required value',
                "reason": "Invalid",
                "details": {
                    "name": "gpu",
                    "group": "resource.k8s.io",
                    "kind": "ResourceClaim",
                    "uid": "u-1",
                    "causes": [
                        {
                            "reason": "FieldValueRequired",
                            "message": "Required value",
                            "field": "spec.devices.requests[0].name",
                        }
                    ],
                    "retryAfterSeconds": 1,
                },
                "code": 422,
            },
        ),
        (
            "status-expired",
            {
                "apiVersion": "v1",
                "kind": "Status",
                "metadata": {"resourceVersion": "12", "continue": "x"},
                "status": "Failure",
                "message": "too old resource version: 5 (12)",
                "reason": "Expired",
                "code": 410,
            },
        ),
        (
            "delete-options",
            {
                "apiVersion": "meta.k8s.io/v1",
                "kind": "DeleteOptions",
                "gracePeriodSeconds": 0,
                "preconditions": {"uid": "9a3c2f4e-1b7d-4c55-8e0a-2d6f1c3b5a79", "resourceVersion": "1042"},
                "propagationPolicy": "Foreground",
                "dryRun": ["All"],
            },
        ),
        ("delete-options-v1", {"apiVersion": "v1", "kind": "DeleteOptions", "orphanDependents": False}),
        (
            "partial-object-metadata",
            {
                "apiVersion": "meta.k8s.io/v1",
                "kind": "PartialObjectMetadata",
                "metadata": claim_meta,
            },
        ),
        (
            "partial-object-metadata-list",
            {
                "apiVersion": "meta.k8s.io/v1",
                "kind": "PartialObjectMetadataList",
                "metadata": {"resourceVersion": "1043"},
                "items": [{"metadata": claim_meta}, {"metadata": {"name": "b", "namespace": "default"}}],
            },
        ),
        (
            "partial-object-metadata-list-v1beta1",
            {
                "apiVersion": "meta.k8s.io/v1beta1",
                "kind": "PartialObjectMetadataList",
                "metadata": {"resourceVersion": "1043"},
                "items": [{"metadata": claim_meta}],
            },
        ),
        (
            "api-versions",
            {
                "kind": "APIVersions",
                "apiVersion": "v1",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.1:6443"}],
            },
        ),
        (
            "api-resource-list",
            {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": "resource.k8s.io/v1",
                "resources": [
                    {
                        "name": "resourceclaims",
                        "singularName": "resourceclaim",
                        "namespaced": True,
                        "kind": "ResourceClaim",
                        "verbs": ["create", "delete", "get", "list", "watch"],
                        "storageVersionHash": "abc=",
                    },
                    {
                        "name": "resourceclaims/status",
                        "singularName": "",
                        "namespaced": True,
                        "kind": "ResourceClaim",
                        "verbs": ["get", "patch", "update"],
                    },
                ],
            },
        ),
        (
            "api-group-list",
            {
                "kind": "APIGroupList",
                "apiVersion": "v1",
                "groups": [
                    {
                        "name": "resource.k8s.io",
                        "versions": [{"groupVersion": "resource.k8s.io/v1", "version": "v1"}],
                        "preferredVersion": {"groupVersion": "resource.k8s.io/v1", "version": "v1"},
                    }
                ],
            },
        ),
        (
            "api-group-discovery-list",
            {
                "kind": "APIGroupDiscoveryList",
                "apiVersion": "apidiscovery.k8s.io/v2",
                "metadata": {},
                "items": [
                    {
                        "metadata": {"name": "resource.k8s.io", "creationTimestamp": None},
                        "versions": [
                            {
                                "version": "v1",
                                "freshness": "Current",
                                "resources": [
                                    {
                                        "resource": "resourceclaims",
                                        "responseKind": {"group": "", "version": "", "kind": "ResourceClaim"},
                                        "scope": "Namespaced",
                                        "singularResource": "resourceclaim",
                                        "verbs": ["create", "delete", "get", "list", "watch"],
                                        "shortNames": ["rc"],
                                        "categories": ["all"],
                                        "subresources": [
                                            {
                                                "subresource": "status",
                                                "responseKind": {"group": "", "version": "", "kind": "ResourceClaim"},
                                                "verbs": ["get", "patch", "update"],
                                            }
                                        ],
                                    }
                                ],
                            }
                        ],
                    }
                ],
            },
        ),
    ]
