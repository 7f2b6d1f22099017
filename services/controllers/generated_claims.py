"""Claims generated from ResourceClaimTemplates: what to create, and how to find one again.

Why this module exists: "exactly one claim per pod claim, through any crash"
rests on two pure decisions. `new_claim_for_pod` builds the claim so that it
can be recognised later (a controller ownerReference to the pod plus the
``resource.kubernetes.io/pod-claim-name`` annotation); `find_generated_claim`
recognises it — or a pre-1.28 claim with the deterministic name — among the
claims the pod owns, so a retry records the existing claim instead of creating
a second one. `claim_statuses_patch` is the pod-status write that records the names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from services.controllers.object_edits import clone
from services.kube.generated_names import generate_name
from services.kube.resourceclaim import (
    POD_CLAIM_NAME_ANNOTATION,
    generate_name_prefix,
    legacy_claim_name,
)

Obj = Mapping[str, Any]

ADMIN_ACCESS_DISABLED = "admin access is requested, but the feature is disabled"


class AdminAccessDisabled(Exception):
    """A template requests admin access while the DRAAdminAccess gate is off."""

    def __init__(self) -> None:
        super().__init__(ADMIN_ACCESS_DISABLED)


def needs_admin_access(template: Obj) -> bool:
    """Whether any device request of the template asks for ``adminAccess``."""
    requests = ((((template.get("spec") or {}).get("spec") or {}).get("devices") or {}).get("requests")) or ()
    return any(bool(request.get("adminAccess")) for request in requests)


def new_claim_for_pod(
    pod: Obj,
    pod_claim: Obj,
    template: Obj,
    *,
    admin_access_enabled: bool,
    pick_name: Callable[[str], str] = generate_name,
) -> dict[str, Any]:
    """The ResourceClaim to create for ``pod_claim`` from ``template``.

    - ``generateName`` ``<pod>-<podclaim>-`` (truncated as Kubernetes does),
      and the name the committer would pick for it (``pick_name``), picked
      here so that the pod status can name the claim in the same chain of
      requests as its create; a name taken meanwhile fails the create with
      AlreadyExists, and the retry picks another;
    - a controller ownerReference to the pod with ``blockOwnerDeletion``;
    - the template's labels and annotations, plus the pod-claim-name annotation;
    - the template's claim spec.

    Raises `AdminAccessDisabled` when the template needs admin access and the
    gate is off (Kubernetes 1.32's check, so such claims are never created).
    """
    if not admin_access_enabled and needs_admin_access(template):
        raise AdminAccessDisabled
    pod_meta = pod.get("metadata") or {}
    template_spec = template.get("spec") or {}
    template_meta = template_spec.get("metadata") or {}
    annotations = dict(template_meta.get("annotations") or {})
    annotations[POD_CLAIM_NAME_ANNOTATION] = str(pod_claim.get("name", ""))
    prefix = generate_name_prefix(str(pod_meta.get("name", "")), str(pod_claim.get("name", "")))
    metadata: dict[str, Any] = {
        "name": pick_name(prefix),
        "generateName": prefix,
        "namespace": pod_meta.get("namespace", ""),
        "ownerReferences": [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pod_meta.get("name", ""),
                "uid": pod_meta.get("uid", ""),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "annotations": annotations,
    }
    if template_meta.get("labels"):
        metadata["labels"] = dict(template_meta["labels"])
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": metadata,
        "spec": clone(template_spec.get("spec") or {}),
    }


def find_generated_claim(pod: Obj, pod_claim: Obj, owned: Iterable[Obj]) -> Obj | None:
    """The claim already generated for ``pod_claim`` among the claims ``owned`` by the pod, if any.

    ``owned`` are the claims whose controller is the pod (by uid). A claim
    matches when its pod-claim-name annotation names the pod claim, or — the
    transition from Kubernetes <= 1.27 — when it has no such annotation and is
    named ``<pod>-<podclaim>``. Should there be several, the oldest wins
    (creation time, then name), so every retry picks the same one; the others
    go away with the pod.
    """
    pod_name = str((pod.get("metadata") or {}).get("name", ""))
    wanted = str(pod_claim.get("name", ""))
    legacy = legacy_claim_name(pod_name, wanted)
    matches = []
    for claim in owned:
        meta = claim.get("metadata") or {}
        annotations = meta.get("annotations") or {}
        if POD_CLAIM_NAME_ANNOTATION in annotations:
            if annotations[POD_CLAIM_NAME_ANNOTATION] != wanted:
                continue
        elif meta.get("name") != legacy:
            continue
        matches.append(claim)
    if not matches:
        return None

    def age(claim: Obj) -> tuple[str, str]:
        meta = claim.get("metadata") or {}
        return str(meta.get("creationTimestamp") or ""), str(meta.get("name", ""))

    return min(matches, key=age)


def claim_statuses_patch(pod: Obj, names: Mapping[str, str]) -> dict[str, Any]:
    """The strategic-merge patch of the pod's status subresource that records ``names`` (pod claim -> claim).

    ``status.resourceClaimStatuses`` merges by ``name``, so the patch carries
    only the new entries and never conflicts with other writers of the pod
    status (Kubernetes uses a forced server-side apply for the same effect).
    ``metadata.uid`` is a precondition: a pod deleted and recreated under the
    same name meanwhile is not touched. Entries follow ``spec.resourceClaims``.
    """
    order = [str(pc.get("name", "")) for pc in (pod.get("spec") or {}).get("resourceClaims") or ()]
    order += sorted(set(names) - set(order))
    entries = [{"name": name, "resourceClaimName": names[name]} for name in order if name in names]
    return {
        "metadata": {"uid": (pod.get("metadata") or {}).get("uid", "")},
        "status": {"resourceClaimStatuses": entries},
    }
