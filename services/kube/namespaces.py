"""Kubernetes' namespace lifecycle rules, in one place.

Why this module exists: the committer (kube-apiserver's namespace registry and
NamespaceLifecycle admission) and the controller-manager's namespace
controller must agree on what "terminating" and "finalized" mean, on the
``kubernetes`` finalizer and on the names and wording Kubernetes uses:
``pkg/registry/core/namespace`` (strategy.go, storage/storage.go),
``k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle`` and
``k8s.io/api/core/v1`` (the condition types). Pure: dicts in, values out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# api.FinalizerKubernetes: every namespace carries it in spec.finalizers from its
# creation until the namespace controller has removed all of its content.
FINALIZER_KUBERNETES = "kubernetes"

ACTIVE = "Active"
TERMINATING = "Terminating"

# The NamespaceLifecycle plugin's immortal namespaces as kube-apiserver registers it
# (metav1.NamespaceDefault, NamespaceSystem, NamespacePublic); kube-node-lease is not one.
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})

# v1.NamespaceTerminatingCause, the cause on a create refused in a terminating namespace.
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"

# v1.NamespaceConditionType values the namespace controller sets, in its order.
DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"
GROUP_VERSION_PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING = "NamespaceContentRemaining"
FINALIZERS_REMAINING = "NamespaceFinalizersRemaining"
CONDITION_TYPES = (
    DISCOVERY_FAILURE,
    GROUP_VERSION_PARSING_FAILURE,
    CONTENT_FAILURE,
    CONTENT_REMAINING,
    FINALIZERS_REMAINING,
)


def spec_finalizers(namespace: Mapping[str, Any]) -> list[str]:
    """``spec.finalizers`` of a namespace (empty when absent)."""
    return [str(f) for f in (namespace.get("spec") or {}).get("finalizers") or []]


def phase(namespace: Mapping[str, Any]) -> str:
    return str((namespace.get("status") or {}).get("phase") or "")


def is_terminating(namespace: Mapping[str, Any]) -> bool:
    """What NamespaceLifecycle checks before a create: ``status.phase`` is Terminating."""
    return phase(namespace) == TERMINATING


def is_deleted(namespace: Mapping[str, Any]) -> bool:
    """A DELETE was accepted (``metadata.deletionTimestamp`` is set)."""
    return bool((namespace.get("metadata") or {}).get("deletionTimestamp"))


def with_kubernetes_finalizer(spec: Mapping[str, Any] | None) -> dict[str, Any]:
    """The namespace strategy's PrepareForCreate: ``kubernetes`` appended to spec.finalizers if missing."""
    out = dict(spec or {})
    finalizers = [str(f) for f in out.get("finalizers") or []]
    if FINALIZER_KUBERNETES not in finalizers:
        finalizers.append(FINALIZER_KUBERNETES)
    out["finalizers"] = finalizers
    return out


def terminating_message(namespace: str) -> str:
    """NamespaceLifecycle's reason for refusing a create in a terminating namespace."""
    return f"unable to create new content in namespace {namespace} because it is being terminated"


def terminating_cause(namespace: str) -> dict[str, str]:
    """The StatusCause NamespaceLifecycle adds to that refusal."""
    return {
        "reason": NAMESPACE_TERMINATING_CAUSE,
        "message": f"namespace {namespace} is being terminated",
        "field": "metadata.namespace",
    }


IMMORTAL_MESSAGE = "this namespace may not be deleted"
