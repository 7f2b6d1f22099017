"""Typed msgspec models of every kind draplane serves, one module per group/version.

Why this package exists: objects travel as plain dicts (docs/conventions.md),
but the API edge needs a typed schema to decode bodies strictly, reject
unknown fields and type errors with Kubernetes' wording, and give components
typed access when they want it (`services.api.machinery.codec.to_model`). msgspec was
chosen over pydantic after measuring both (docs/decisions/models.md).

- `base` — the base Struct and scalar types (Int32, Quantity, Time, ...);
- `meta` — ObjectMeta, ListMeta, LabelSelector, Status, DeleteOptions;
- `core_v1` — Namespace, Node, Pod, Binding, Event, and (stored only, for
  upstream kube-scheduler's informers) PersistentVolume,
  PersistentVolumeClaim, Service, ReplicationController;
- `apps_v1`, `policy_v1`, `storage_v1` — ReplicaSet, StatefulSet,
  PodDisruptionBudget, StorageClass, CSINode, CSIDriver, CSIStorageCapacity
  (stored only);
- `events_v1` — events.k8s.io/v1 Event, a view of core/v1 Events;
- `resource_v1alpha3` — DeviceClass, ResourceClaim, ResourceClaimTemplate,
  ResourceSlice, PodSchedulingContext;
- `resource_v1`, `resource_v1beta2`, `resource_v1beta1` — Kubernetes 1.37's
  shapes of the group.
- `coordination_v1` — Lease;
- `authentication_v1`, `authorization_v1` — SelfSubjectReview,
  SelfSubjectAccessReview and SelfSubjectRulesReview, answered by the
  apiserver and never stored (`services.apiserver.reviews`);
- `resource_hub` — the group's storage (hub) form: v1beta1's models plus the
  1.31-only classic fields (docs/decisions/api-versions.md).

The model modules are generated from Kubernetes' own schemas
(`services.api.types.schemas`) by ``python -m ops.gen_models --write``.

A new API version adds a module to the generator (`ops.gen_models.MODULES`),
rows in `MODELS` and the registry, and conversion functions to the storage
version (`services.api.machinery.conversion`). ``MODELS`` also names the hub
models under `registry.INTERNAL`: what stored objects and components' writes
are decoded with.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import MappingProxyType

from services.api.types import (
    apps_v1,
    authentication_v1,
    authorization_v1,
    coordination_v1,
    core_v1,
    events_v1,
    meta,
    policy_v1,
    resource_hub,
    resource_v1,
    resource_v1alpha3,
    resource_v1beta1,
    resource_v1beta2,
    storage_v1,
)
from services.api.types.base import K8sStruct
from services.api.types.registry import INTERNAL

__all__ = [
    "ALL_MODELS",
    "GO_PACKAGES",
    "MODELS",
    "K8sStruct",
    "apps_v1",
    "authentication_v1",
    "authorization_v1",
    "coordination_v1",
    "core_v1",
    "definition_of",
    "events_v1",
    "meta",
    "model_for",
    "policy_v1",
    "release_of",
    "resource_v1",
    "resource_v1alpha3",
    "resource_v1beta1",
    "resource_v1beta2",
    "storage_v1",
]

# (group, version, kind) → model of that kind in that version.
MODELS: Mapping[tuple[str, str, str], type[K8sStruct]] = MappingProxyType(
    {
        ("", "v1", "Namespace"): core_v1.Namespace,
        ("", "v1", "Node"): core_v1.Node,
        ("", "v1", "Pod"): core_v1.Pod,
        ("", "v1", "Binding"): core_v1.Binding,
        ("", "v1", "Event"): core_v1.Event,
        ("", "v1", "Status"): meta.Status,
        ("", "v1", "DeleteOptions"): meta.DeleteOptions,
        ("meta.k8s.io", "v1", "DeleteOptions"): meta.DeleteOptions,
        ("meta.k8s.io", "v1", "Status"): meta.Status,
        ("resource.k8s.io", "v1alpha3", "DeviceClass"): resource_v1alpha3.DeviceClass,
        ("resource.k8s.io", "v1alpha3", "ResourceClaim"): resource_v1alpha3.ResourceClaim,
        ("resource.k8s.io", "v1alpha3", "ResourceClaimTemplate"): resource_v1alpha3.ResourceClaimTemplate,
        ("resource.k8s.io", "v1alpha3", "ResourceSlice"): resource_v1alpha3.ResourceSlice,
        ("resource.k8s.io", "v1alpha3", "PodSchedulingContext"): resource_v1alpha3.PodSchedulingContext,
        ("coordination.k8s.io", "v1", "Lease"): coordination_v1.Lease,
        ("", "v1", "PersistentVolume"): core_v1.PersistentVolume,
        ("", "v1", "PersistentVolumeClaim"): core_v1.PersistentVolumeClaim,
        ("", "v1", "Service"): core_v1.Service,
        ("", "v1", "ReplicationController"): core_v1.ReplicationController,
        ("apps", "v1", "ReplicaSet"): apps_v1.ReplicaSet,
        ("apps", "v1", "StatefulSet"): apps_v1.StatefulSet,
        ("policy", "v1", "PodDisruptionBudget"): policy_v1.PodDisruptionBudget,
        ("storage.k8s.io", "v1", "StorageClass"): storage_v1.StorageClass,
        ("storage.k8s.io", "v1", "CSINode"): storage_v1.CSINode,
        ("storage.k8s.io", "v1", "CSIDriver"): storage_v1.CSIDriver,
        ("storage.k8s.io", "v1", "CSIStorageCapacity"): storage_v1.CSIStorageCapacity,
        ("authentication.k8s.io", "v1", "SelfSubjectReview"): authentication_v1.SelfSubjectReview,
        ("authorization.k8s.io", "v1", "SelfSubjectAccessReview"): authorization_v1.SelfSubjectAccessReview,
        ("authorization.k8s.io", "v1", "SelfSubjectRulesReview"): authorization_v1.SelfSubjectRulesReview,
        **{
            ("resource.k8s.io", module.DEFINITION_PREFIX.rsplit(".", 2)[1], kind): getattr(module, kind)
            for module, kinds in (
                (
                    resource_v1,
                    ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceTaintRule"),
                ),
                (
                    resource_v1beta2,
                    ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceTaintRule"),
                ),
                (resource_v1beta1, ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")),
            )
            for kind in kinds
        },
        # The storage (hub) form: what the log holds and components write.
        **{("resource.k8s.io", INTERNAL, kind): model for kind, model in resource_hub.HUB_MODELS.items()},
    }
)

# Every model of a kind (today every one is served).
ALL_MODELS: Mapping[tuple[str, str, str], type[K8sStruct]] = MODELS

# Python module → the Go package name of its types, for Go-worded errors
# (io.k8s.api.resource.v1alpha3. → v1alpha3).
GO_PACKAGES: Mapping[str, str] = MappingProxyType(
    {
        module.__name__: module.DEFINITION_PREFIX.rsplit(".", 2)[1]
        for module in (
            meta,
            core_v1,
            resource_v1alpha3,
            resource_v1,
            resource_v1beta2,
            resource_v1beta1,
            coordination_v1,
            authentication_v1,
            authorization_v1,
            apps_v1,
            policy_v1,
            storage_v1,
        )
    }
)


def model_for(group: str, version: str, kind: str) -> type[K8sStruct] | None:
    """The model of ``kind`` in ``group/version``, or None when draplane has none."""
    return MODELS.get((group, version, kind))


def definition_of(cls: type) -> str | None:
    """The name of a model's definition in Kubernetes' schemas (``io.k8s.api.core.v1.Pod``), or None."""
    prefix = getattr(sys.modules.get(cls.__module__), "DEFINITION_PREFIX", None)
    return prefix + cls.__name__ if isinstance(prefix, str) else None


def release_of(cls: type) -> str | None:
    """The Kubernetes release whose schemas a model was generated from (``"1.31"``), or None.

    A type backported from a later release (the module's ``BACKPORTED_TYPES``) names that release.
    """
    module = sys.modules.get(cls.__module__)
    backported = getattr(module, "BACKPORTED_TYPES", {}).get(cls.__name__)
    release = backported or getattr(module, "K8S_RELEASE", None)
    return release if isinstance(release, str) else None


def backported_fields(cls: type) -> dict[str, str]:
    """Wire name -> release of the fields a model has from a later release than its own (``BACKPORTED_FIELDS``)."""
    fields = getattr(sys.modules.get(cls.__module__), "BACKPORTED_FIELDS", {})
    prefix = cls.__name__ + "."
    return {key[len(prefix) :]: release for key, release in fields.items() if key.startswith(prefix)}
