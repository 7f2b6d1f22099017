"""Resources draplane answers but never stores: who-am-I and can-I reviews.

``kubectl auth whoami`` creates an ``authentication.k8s.io/v1``
SelfSubjectReview, ``kubectl auth can-i`` an ``authorization.k8s.io/v1``
SelfSubjectAccessReview and ``kubectl auth can-i --list`` a
SelfSubjectRulesReview. kube-apiserver answers each create at once from the
request's user and its authorizer, and keeps nothing (the registry's
``selfsubject*review/rest.go``): the response is the request with its status
filled, 201 Created. draplane does the same, asking the very
`services.api.admission.authorization.Authorizer` the committer's admission
runs on every write, so can-i says what a write gets.

The types are not in `services.api.types.registry`: the committer, the log's
keys and the garbage collector never meet them. Discovery lists them with the
one verb ``create``, as Kubernetes does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from services.api.admission.authorization import Authorizer
from services.api.machinery import status as st
from services.api.machinery.field_errors import FieldError, Verbatim, invalid
from services.api.types.registry import ResourceType
from services.kube.times import time_text
from topics.envelope import UserInfo

AUTHENTICATION_GROUP = "authentication.k8s.io"
AUTHORIZATION_GROUP = "authorization.k8s.io"

SELF_SUBJECT_REVIEWS = ResourceType(
    AUTHENTICATION_GROUP, "v1", "SelfSubjectReview", "selfsubjectreviews", "selfsubjectreview", False
)
SELF_SUBJECT_ACCESS_REVIEWS = ResourceType(
    AUTHORIZATION_GROUP, "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", "selfsubjectaccessreview", False
)
SELF_SUBJECT_RULES_REVIEWS = ResourceType(
    AUTHORIZATION_GROUP, "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", "selfsubjectrulesreview", False
)

RESOURCES: tuple[ResourceType, ...] = (SELF_SUBJECT_REVIEWS, SELF_SUBJECT_ACCESS_REVIEWS, SELF_SUBJECT_RULES_REVIEWS)
VERBS = ["create"]
# The groups only reviews live in, and their served versions.
GROUP_VERSIONS: Mapping[str, tuple[str, ...]] = {AUTHENTICATION_GROUP: ("v1",), AUTHORIZATION_GROUP: ("v1",)}

_BY_GROUP_RESOURCE = {(r.group, r.plural): r for r in RESOURCES}
_UNION = "exactly one of nonResourceAttributes or resourceAttributes must be specified"

Obj = dict[str, Any]


def by_resource(group: str, plural: str) -> ResourceType | None:
    return _BY_GROUP_RESOURCE.get((group, plural))


def is_review(rt: ResourceType) -> bool:
    return (rt.group, rt.plural) in _BY_GROUP_RESOURCE


def self_subject_review(user: UserInfo, *, uid: str, now: datetime) -> Obj:
    """Who the caller is (pkg/registry/authentication/selfsubjectreview)."""
    info: Obj = {"username": user.name}
    if uid:
        info["uid"] = uid
    if user.groups:
        info["groups"] = list(user.groups)
    return {
        "kind": SELF_SUBJECT_REVIEWS.kind,
        "apiVersion": f"{AUTHENTICATION_GROUP}/v1",
        "metadata": {"creationTimestamp": time_text(now)},
        "status": {"userInfo": info},
    }


def _mapping(obj: Mapping[str, Any], key: str) -> Obj:
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def _text(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def _non_resource_value(attrs: Obj) -> Verbatim:
    """A set ``nonResourceAttributes`` as a field error prints it: the internal Go struct (no json tags) as JSON."""
    return Verbatim(json.dumps({"Path": _text(attrs, "path"), "Verb": _text(attrs, "verb")}, separators=(",", ":")))


def validate_access_review(review: Obj) -> list[FieldError]:
    """pkg/apis/authorization/validation's ValidateSelfSubjectAccessReview (the union and empty metadata)."""
    spec = _mapping(review, "spec")
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    errs: list[FieldError] = []
    if resource is not None and non_resource is not None:
        errs.append(invalid("spec", _non_resource_value(_mapping(spec, "nonResourceAttributes")), _UNION))
    if resource is None and non_resource is None:
        errs.append(invalid("spec", None, _UNION))
    return errs


def self_subject_access_review(review: Obj, user: UserInfo, *, authorizer: Authorizer) -> Obj:
    """``review`` with its status: may the caller do what its spec names? Raises 422 for a bad spec."""
    errs = validate_access_review(review)
    if errs:
        raise st.invalid(AUTHORIZATION_GROUP, SELF_SUBJECT_ACCESS_REVIEWS.kind, "", errs)
    spec = _mapping(review, "spec")
    if spec.get("resourceAttributes") is not None:
        attrs = _mapping(spec, "resourceAttributes")
        allowed = authorizer.allowed(
            user,
            verb=_text(attrs, "verb"),
            resource=_text(attrs, "resource"),
            subresource=_text(attrs, "subresource"),
            group=_text(attrs, "group"),
        )
    else:
        allowed = authorizer.allowed_non_resource(user, verb=_text(_mapping(spec, "nonResourceAttributes"), "verb"))
    metadata = _mapping(review, "metadata")
    return {
        **review,
        "metadata": {**metadata, "creationTimestamp": metadata.get("creationTimestamp")},
        "status": {"allowed": allowed},
    }


def self_subject_rules_review(review: Obj, user: UserInfo, *, authorizer: Authorizer) -> Obj:
    """Every rule the caller has in the spec's namespace (the table has no namespaced rules)."""
    if not _text(_mapping(review, "spec"), "namespace"):
        raise st.bad_request("no namespace on request")
    rules = [
        {"verbs": list(r.verbs), "apiGroups": list(r.api_groups), "resources": list(r.resources)}
        for r in authorizer.rules(user)
    ]
    non_resource = [
        {"verbs": list(r.verbs), "nonResourceURLs": list(r.urls)} for r in authorizer.non_resource_rules(user)
    ]
    return {
        "kind": SELF_SUBJECT_RULES_REVIEWS.kind,
        "apiVersion": f"{AUTHORIZATION_GROUP}/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {},
        "status": {"resourceRules": rules, "nonResourceRules": non_resource, "incomplete": False},
    }
