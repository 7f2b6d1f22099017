"""Admin access to devices needs a labelled namespace (Kubernetes 1.33 and later).

Why this module exists: from 1.33, kube-apiserver lets a ResourceClaim or
ResourceClaimTemplate ask for ``adminAccess: true`` only in a namespace
labelled ``resource.kubernetes.io/admin-access: "true"``, and lets a claim's
status grant it (allocation results' ``adminAccess``) only there
(pkg/registry/resource/utils.go of 1.37.2, ``AuthorizedForAdmin`` and
``AuthorizedForAdminStatus``, called from the claim and template strategies'
``Validate`` and the claim status strategy's ``ValidateUpdate``). The rule is
Kubernetes':

- only a request's own ``adminAccess`` counts (subrequests cannot set it), the
  first request that sets it to true is the one named, and the path is
  ``spec.devices.requests[i].adminAccess`` for claims *and* templates (the
  strategies share one function with a fixed path);
- ``Forbidden: admin access to devices requires the
  `resource.kubernetes.io/admin-access: true` label on the containing
  namespace``; a namespace that cannot be read is an internal error;
- updates of the spec are not checked (the spec is immutable); a status update
  is checked only when the old status granted no admin access.

The seeds' release, 1.31, has no such rule: it applies from release 1.37
(``--emulated-version``), where ``DRAAdminAccess`` is GA.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from services.api.machinery.field_errors import FieldError, forbidden, internal
from services.api.types.registry import RESOURCE_GROUP, ResourceType
from services.kube.feature_gates_table import RELEASE_1_37, release_key

__all__ = ["ADMIN_NAMESPACE_LABEL", "admin_access_errors", "checks_admin_namespace"]

ADMIN_NAMESPACE_LABEL = "resource.kubernetes.io/admin-access"
"""``DRAAdminNamespaceLabelKey``: the namespace label that grants ``adminAccess``."""

_DETAIL = f"admin access to devices requires the `{ADMIN_NAMESPACE_LABEL}: true` label on the containing namespace"


def checks_admin_namespace(release: str) -> bool:
    """Whether writes at ``release`` need the label (1.33 and later; draplane has 1.31 and 1.37)."""
    return release_key(release) >= release_key(RELEASE_1_37)


def admin_access_errors(
    rt: ResourceType,
    *,
    new: dict[str, Any],
    old: dict[str, Any] | None,
    subresource: str,
    namespace: Callable[[], dict[str, Any] | None],
) -> list[FieldError]:
    """The field errors of a hub-form claim or template write asking for admin access outside a labelled namespace.

    ``old`` is None on create; ``namespace`` reads the containing Namespace
    (None when there is none), only when admin access is asked for.
    """
    if rt.group != RESOURCE_GROUP:
        return []
    path = _requested(rt, new=new, old=old, subresource=subresource)
    if path is None:
        return []
    ns = namespace()
    if ns is None:
        name = (new.get("metadata") or {}).get("namespace", "")
        return [internal(path, f'could not retrieve namespace to verify admin access: namespaces "{name}" not found')]
    labels = (ns.get("metadata") or {}).get("labels") or {}
    if labels.get(ADMIN_NAMESPACE_LABEL) != "true":
        return [forbidden(path, _DETAIL)]
    return []


def _requested(rt: ResourceType, *, new: dict[str, Any], old: dict[str, Any] | None, subresource: str) -> str | None:
    """The path of the admin access this write asks for, or None."""
    if rt.kind == "ResourceClaimTemplate" and old is None and subresource == "":
        return _request_path((new.get("spec") or {}).get("spec") or {})
    if rt.kind != "ResourceClaim":
        return None
    if old is None and subresource == "":
        return _request_path(new.get("spec") or {})
    if subresource == "status" and old is not None:
        if _result_path(old) is not None:
            return None
        return _result_path(new)
    return None


def _request_path(claim_spec: dict[str, Any]) -> str | None:
    requests = (claim_spec.get("devices") or {}).get("requests") or []
    for i, request in enumerate(requests):
        # The hub form keeps a request's ``exactly`` fields flat in the request.
        if isinstance(request, dict) and request.get("adminAccess") is True:
            return f"spec.devices.requests[{i}].adminAccess"
    return None


def _result_path(claim: dict[str, Any]) -> str | None:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    results = (allocation.get("devices") or {}).get("results") or []
    for i, result in enumerate(results):
        if isinstance(result, dict) and result.get("adminAccess") is True:
            return f"status.allocation.devices.results[{i}].adminAccess"
    return None
