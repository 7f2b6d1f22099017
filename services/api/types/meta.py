"""meta.k8s.io/v1 types shared by every kind (k8s.io/apimachinery/pkg/apis/meta/v1).

Why this module exists: ObjectMeta, ListMeta, label selectors, Status and
DeleteOptions appear in every group, so they are defined once. Field sets are
those of Kubernetes 1.31.
"""

from __future__ import annotations

import msgspec

from services.api.types.base import Int32, Int64, K8sStruct, RawJSON, Time


class OwnerReference(K8sStruct):
    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    uid: str | None = None
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ManagedFieldsEntry(K8sStruct):
    manager: str | None = None
    operation: str | None = None
    api_version: str | None = None
    time: Time | None = None
    fields_type: str | None = None
    # FieldsV1 is an opaque JSON object describing a field set.
    fields_v1: RawJSON = None
    subresource: str | None = None


class ObjectMeta(K8sStruct):
    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    self_link: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: Int64 | None = None
    creation_timestamp: Time | None = None
    deletion_timestamp: Time | None = None
    deletion_grace_period_seconds: Int64 | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    managed_fields: list[ManagedFieldsEntry] | None = None


class ListMeta(K8sStruct):
    self_link: str | None = None
    resource_version: str | None = None
    continue_: str | None = msgspec.field(default=None, name="continue")
    remaining_item_count: Int64 | None = None


class LabelSelectorRequirement(K8sStruct):
    key: str | None = None
    operator: str | None = None
    values: list[str] | None = None


class LabelSelector(K8sStruct):
    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None


class StatusCause(K8sStruct):
    reason: str | None = None
    message: str | None = None
    field: str | None = None


class StatusDetails(K8sStruct):
    name: str | None = None
    group: str | None = None
    kind: str | None = None
    uid: str | None = None
    causes: list[StatusCause] | None = None
    retry_after_seconds: Int32 | None = None


class Status(K8sStruct):
    api_version: str | None = None
    kind: str | None = None
    metadata: ListMeta | None = None
    status: str | None = None
    message: str | None = None
    reason: str | None = None
    details: StatusDetails | None = None
    code: Int32 | None = None


class Preconditions(K8sStruct):
    uid: str | None = None
    resource_version: str | None = None


class DeleteOptions(K8sStruct):
    api_version: str | None = None
    kind: str | None = None
    grace_period_seconds: Int64 | None = None
    preconditions: Preconditions | None = None
    orphan_dependents: bool | None = None
    propagation_policy: str | None = None
    dry_run: list[str] | None = None
