"""Pod validation: metadata and spec on create, status updates, bindings.

draplane validates the parts of a pod its components depend on: the DRA
claims (`pod_claims`), containers and their resources (`containers`,
`resources`), scheduling inputs (node name, node selector and affinity,
tolerations, scheduling gates, priority) and the restart and DNS policies.
Volumes, probes, ports, environment, security contexts and the other
kubelet-only fields are not validated (see the module list in
``services/api/admission/validation/__init__.py``). Update rules live in `pod_update`.
"""

from __future__ import annotations

from typing import Any

from services.api.admission.validation.access import Obj, integer, items, mapping, text
from services.api.admission.validation.containers import (
    validate_containers,
    validate_image_whitespace,
    validate_init_containers,
)
from services.api.admission.validation.names import dns1123_label_errors, name_is_dns_subdomain, qualified_name_errors
from services.api.admission.validation.node_selector import validate_node_affinity
from services.api.admission.validation.object_meta import (
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)
from services.api.admission.validation.pod_claims import (
    pod_claim_names,
    validate_pod_extended_resource_claim_status,
    validate_pod_resource_claim_statuses,
    validate_pod_resource_claims,
)
from services.api.admission.validation.tolerations import validate_tolerations
from services.api.machinery.field_errors import FieldError, duplicate, forbidden, invalid, not_supported, required

MAX_INT32 = 2**31 - 1
RESTART_POLICIES = ["Always", "OnFailure", "Never"]
DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
PREEMPTION_POLICIES = ["PreemptLowerPriority", "Never"]
_SYSTEM_CONDITIONS = frozenset({"PodScheduled", "Ready", "Initialized"})

validate_pod_name = name_is_dns_subdomain


def _name_errors(value: str, path: str) -> list[FieldError]:
    return [invalid(path, value, m) for m in name_is_dns_subdomain(value, False)]


def validate_scheduling_gates(gates: list[Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, gate in enumerate(gates):
        name = text(gate, "name") if isinstance(gate, dict) else ""
        errs.extend(qualified_name_errors(name, f"{path}[{i}]"))
        if name in seen:
            errs.append(duplicate(f"{path}[{i}]", name))
        seen.add(name)
    return errs


def validate_pod_spec(spec: Obj, path: str = "spec") -> list[FieldError]:
    errs: list[FieldError] = []
    claims = items(spec, "resourceClaims")
    names = pod_claim_names(claims)
    errs.extend(validate_pod_resource_claims(claims, f"{path}.resourceClaims"))
    containers = items(spec, "containers")
    errs.extend(validate_containers(containers, names, f"{path}.containers"))
    errs.extend(validate_init_containers(items(spec, "initContainers"), containers, names, f"{path}.initContainers"))
    restart_policy = text(spec, "restartPolicy")  # empty: defaulted to Always
    if restart_policy and restart_policy not in RESTART_POLICIES:
        errs.append(not_supported(f"{path}.restartPolicy", restart_policy, RESTART_POLICIES))
    dns_policy = text(spec, "dnsPolicy")  # empty: defaulted to ClusterFirst
    if dns_policy and dns_policy not in DNS_POLICIES:
        errs.append(not_supported(f"{path}.dnsPolicy", dns_policy, DNS_POLICIES))
    errs.extend(validate_labels(mapping(spec, "nodeSelector"), f"{path}.nodeSelector"))
    affinity = spec.get("affinity")
    if isinstance(affinity, dict) and isinstance(affinity.get("nodeAffinity"), dict):
        errs.extend(validate_node_affinity(affinity["nodeAffinity"], f"{path}.affinity.nodeAffinity"))
    for i, gate in enumerate(items(spec, "readinessGates")):
        condition = text(gate, "conditionType") if isinstance(gate, dict) else ""
        errs.extend(qualified_name_errors(condition, f"{path}.readinessGates[{i}].conditionType"))
    errs.extend(validate_scheduling_gates(items(spec, "schedulingGates"), f"{path}.schedulingGates"))
    service_account = text(spec, "serviceAccountName")
    if service_account:
        errs.extend(_name_errors(service_account, f"{path}.serviceAccountName"))
    node_name = text(spec, "nodeName")
    if node_name:
        errs.extend(_name_errors(node_name, f"{path}.nodeName"))
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not 1 <= deadline <= MAX_INT32:
        errs.append(invalid(f"{path}.activeDeadlineSeconds", deadline, f"must be between 1 and {MAX_INT32}, inclusive"))
    hostname = text(spec, "hostname")
    if hostname:
        errs.extend(dns1123_label_errors(hostname, f"{path}.hostname"))
    subdomain = text(spec, "subdomain")
    if subdomain:
        errs.extend(dns1123_label_errors(subdomain, f"{path}.subdomain"))
    tolerations = items(spec, "tolerations")
    if tolerations:
        errs.extend(validate_tolerations(tolerations, f"{path}.tolerations"))
    priority_class = text(spec, "priorityClassName")
    if priority_class:
        errs.extend(_name_errors(priority_class, f"{path}.priorityClassName"))
    runtime_class = spec.get("runtimeClassName")
    if isinstance(runtime_class, str):
        errs.extend(_name_errors(runtime_class, f"{path}.runtimeClassName"))
    preemption = spec.get("preemptionPolicy")
    if isinstance(preemption, str):
        if not preemption:
            errs.append(required(f"{path}.preemptionPolicy"))
        elif preemption not in PREEMPTION_POLICIES:
            errs.append(not_supported(f"{path}.preemptionPolicy", preemption, PREEMPTION_POLICIES))
    return errs


def validate_pod_metadata_and_spec(pod: Obj) -> list[FieldError]:
    errs = validate_object_meta(mapping(pod, "metadata"), namespaced=True, name_fn=validate_pod_name)
    spec = mapping(pod, "spec")
    errs.extend(validate_pod_spec(spec))
    errs.extend(validate_image_whitespace(items(spec, "containers"), "spec.containers"))
    errs.extend(validate_image_whitespace(items(spec, "initContainers"), "spec.initContainers"))
    return errs


def validate_pod_create(pod: Obj) -> list[FieldError]:
    errs = validate_pod_metadata_and_spec(pod)
    spec = mapping(pod, "spec")
    if items(spec, "ephemeralContainers"):
        errs.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if text(spec, "nodeName") and items(spec, "schedulingGates"):
        errs.append(forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
    return errs


# --- status ---------------------------------------------------------------------


def _terminated(status: Any) -> Obj | None:
    if not isinstance(status, dict):
        return None
    terminated = mapping(status, "state").get("terminated")
    return terminated if isinstance(terminated, dict) else None


def _state_transitions(
    new_statuses: list[Any], old_statuses: list[Any], path: str, restart_policy: str, restartable: frozenset[str]
) -> list[FieldError]:
    """Containers that terminated for good may not come back (unless the pod restarts them)."""
    if restart_policy == "Always":
        return []
    errs: list[FieldError] = []
    for i, old in enumerate(old_statuses):
        terminated = _terminated(old)
        if terminated is None:
            continue
        if integer(terminated, "exitCode") != 0 and restart_policy == "OnFailure":
            continue
        name = text(old, "name")
        if name in restartable:
            continue
        errs.extend(
            forbidden(f"{path}[{i}].state", "may not be transitioned to non-terminated state")
            for new in new_statuses
            if isinstance(new, dict) and text(new, "name") == name and _terminated(new) is None
        )
    return errs


def validate_pod_status_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
    new_status, old_status = mapping(new, "status"), mapping(old, "status")
    new_spec, old_spec = mapping(new, "spec"), mapping(old, "spec")
    for i, condition in enumerate(items(new_status, "conditions")):
        condition_type = text(condition, "type") if isinstance(condition, dict) else ""
        if condition_type not in _SYSTEM_CONDITIONS:
            # Kubernetes reports these under metadata.conditions[i].Type.
            errs.extend(qualified_name_errors(condition_type, f"metadata.conditions[{i}].Type"))
    if text(new_spec, "nodeName") != text(old_spec, "nodeName"):
        errs.append(forbidden("status.nodeName", "may not be changed directly"))
    nominated = text(new_status, "nominatedNodeName")
    if nominated and nominated != text(old_status, "nominatedNodeName"):
        errs.extend(_name_errors(nominated, "status.nominatedNodeName"))
    restart_policy = text(old_spec, "restartPolicy") or "Always"
    errs.extend(
        _state_transitions(
            items(new_status, "containerStatuses"),
            items(old_status, "containerStatuses"),
            "status.containerStatuses",
            restart_policy,
            frozenset(),
        )
    )
    sidecars = frozenset(
        text(c, "name")
        for c in items(old_spec, "initContainers")
        if isinstance(c, dict) and c.get("restartPolicy") == "Always"
    )
    errs.extend(
        _state_transitions(
            items(new_status, "initContainerStatuses"),
            items(old_status, "initContainerStatuses"),
            "status.initContainerStatuses",
            restart_policy,
            sidecars,
        )
    )
    errs.extend(
        _state_transitions(
            items(new_status, "ephemeralContainerStatuses"),
            items(old_status, "ephemeralContainerStatuses"),
            "status.ephemeralContainerStatuses",
            "Never",
            frozenset(),
        )
    )
    errs.extend(
        validate_pod_resource_claim_statuses(
            items(new_status, "resourceClaimStatuses"),
            items(new_spec, "resourceClaims"),
            "status.resourceClaimStatuses",
        )
    )
    errs.extend(
        validate_pod_extended_resource_claim_status(
            new_status.get("extendedResourceClaimStatus"), new_spec, "status.extendedResourceClaimStatus"
        )
    )
    return errs


def validate_pod_binding(binding: Obj) -> list[FieldError]:
    """A ``pods/binding`` body: the target must be a Node, by name."""
    errs: list[FieldError] = []
    target = mapping(binding, "target")
    kind = text(target, "kind")
    if kind and kind != "Node":
        errs.append(not_supported("target.kind", kind, ["Node", "<empty>"]))
    if not text(target, "name"):
        errs.append(required("target.name"))
    return errs
