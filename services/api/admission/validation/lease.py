"""Lease validation (coordination.k8s.io/v1), as Kubernetes 1.37's pkg/apis/coordination/validation.

Node agents renew their Lease in ``kube-node-lease`` and leader election holds
one, so a Lease must be what Kubernetes accepts: a DNS-subdomain name, a
positive ``leaseDurationSeconds``, non-negative ``leaseTransitions``, a known
``strategy`` and ``preferredHolder`` only with a strategy. ``holderIdentity``,
``acquireTime`` and ``renewTime`` are free. Update re-runs the spec rules.
"""

from __future__ import annotations

from services.api.admission.validation.access import Obj, mapping
from services.api.admission.validation.names import is_qualified_name, name_is_dns_subdomain
from services.api.admission.validation.object_meta import validate_object_meta, validate_object_meta_update
from services.api.machinery.field_errors import FieldError, forbidden, invalid, not_supported

# coordination.OldestEmulationVersion: the only strategy Kubernetes defines.
VALID_LEASE_STRATEGIES = ["OldestEmulationVersion"]


def validate_lease(lease: Obj) -> list[FieldError]:
    errs = validate_object_meta(mapping(lease, "metadata"), namespaced=True, name_fn=name_is_dns_subdomain)
    errs.extend(validate_lease_spec(mapping(lease, "spec"), "spec"))
    return errs


def validate_lease_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(mapping(new, "metadata"), mapping(old, "metadata"))
    errs.extend(validate_lease_spec(mapping(new, "spec"), "spec"))
    return errs


def validate_lease_spec(spec: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errs.append(invalid(f"{path}.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        errs.append(invalid(f"{path}.leaseTransitions", transitions, "must be greater than or equal to 0"))
    strategy = spec.get("strategy")
    if isinstance(strategy, str):
        errs.extend(validate_coordinated_lease_strategy(strategy, f"{path}.strategy"))
    holder = spec.get("preferredHolder")
    if isinstance(holder, str) and holder and not strategy:
        errs.append(forbidden(f"{path}.preferredHolder", "may only be specified if `strategy` is defined"))
    return errs


def validate_coordinated_lease_strategy(strategy: str, path: str) -> list[FieldError]:
    """A Kubernetes-defined name, or a qualified name with a prefix (``example.com/mine``).

    The error path repeats ``strategy`` (``spec.strategy.strategy``), as Kubernetes' does.
    """
    if "/" not in strategy:
        if strategy not in VALID_LEASE_STRATEGIES:
            return [not_supported(f"{path}.strategy", strategy, VALID_LEASE_STRATEGIES)]
        return []
    return [invalid(f"{path}.strategy", strategy, msg) for msg in is_qualified_name(strategy)]
