"""Container rules of a pod spec: names, images, policies and resources.

Regular and init containers need a unique DNS-label name and an image; their
resources (including DRA claims) are checked by `resources`. Init containers
may only use ``restartPolicy: Always`` (sidecars); regular containers may not
set it. Values Kubernetes defaults before validation (an empty
``terminationMessagePolicy`` or ``imagePullPolicy``) are accepted as
defaulted.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from services.api.admission.validation.access import Obj, mapping, text
from services.api.admission.validation.names import dns1123_label_errors
from services.api.admission.validation.resources import validate_resource_requirements
from services.api.machinery.field_errors import FieldError, duplicate, forbidden, invalid, not_supported, required

_TERMINATION_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]
_PULL_POLICIES = ["Always", "IfNotPresent", "Never"]  # sorted, as Kubernetes lists them
_INIT_ONLY_WITH_RESTART = ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")


def _container(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def validate_container_common(ctr: Obj, pod_claims: Set[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name = text(ctr, "name")
    if not name:
        errs.append(required(f"{path}.name"))
    else:
        errs.extend(dns1123_label_errors(name, f"{path}.name"))
    if not text(ctr, "image"):
        errs.append(required(f"{path}.image"))
    policy = text(ctr, "terminationMessagePolicy")
    if policy and policy not in _TERMINATION_MESSAGE_POLICIES:
        errs.append(not_supported(f"{path}.terminationMessagePolicy", policy, _TERMINATION_MESSAGE_POLICIES))
    pull_policy = text(ctr, "imagePullPolicy")
    if pull_policy and pull_policy not in _PULL_POLICIES:
        errs.append(not_supported(f"{path}.imagePullPolicy", pull_policy, _PULL_POLICIES))
    errs.extend(validate_resource_requirements(mapping(ctr, "resources"), pod_claims, f"{path}.resources"))
    return errs


def validate_containers(containers: list[Any], pod_claims: Set[str], path: str) -> list[FieldError]:
    if not containers:
        return [required(path)]
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, value in enumerate(containers):
        ctr = _container(value)
        p = f"{path}[{i}]"
        errs.extend(validate_container_common(ctr, pod_claims, p))
        name = text(ctr, "name")
        if name in names:
            errs.append(duplicate(f"{p}.name", name))
        else:
            names.add(name)
        if ctr.get("restartPolicy") is not None:
            errs.append(forbidden(f"{p}.restartPolicy", "may not be set for non-init containers"))
    return errs


def validate_init_containers(
    containers: list[Any], regular: list[Any], pod_claims: Set[str], path: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    names = {text(_container(c), "name") for c in regular}
    for i, value in enumerate(containers):
        ctr = _container(value)
        p = f"{path}[{i}]"
        errs.extend(validate_container_common(ctr, pod_claims, p))
        restart_always = False
        restart_policy = ctr.get("restartPolicy")
        if restart_policy is not None:
            if restart_policy != "Always":
                errs.append(not_supported(f"{p}.restartPolicy", restart_policy, ["Always"]))
            restart_always = restart_policy == "Always"
        name = text(ctr, "name")
        if name in names:
            errs.append(duplicate(f"{p}.name", name))
        elif name:
            names.add(name)
        if not restart_always:
            errs.extend(
                forbidden(f"{p}.{field}", "may not be set for init containers without restartPolicy=Always")
                for field in _INIT_ONLY_WITH_RESTART
                if ctr.get(field) is not None
            )
        if ctr.get("resizePolicy"):
            errs.append(invalid(f"{p}.resizePolicy", ctr["resizePolicy"], "must not be set for init containers"))
    return errs


def validate_image_whitespace(containers: list[Any], path: str) -> list[FieldError]:
    """Pod-only rule (not for templates): no leading or trailing whitespace in images."""
    errs: list[FieldError] = []
    for i, value in enumerate(containers):
        image = text(_container(value), "image")
        if image != image.strip():
            errs.append(invalid(f"{path}[{i}].image", image, "must not have leading or trailing whitespace"))
    return errs
