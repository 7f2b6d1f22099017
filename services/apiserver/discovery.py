"""API discovery documents, built once from the registry.

Clients learn what exists before they do anything: ``/api``, ``/apis`` and the
per group-version ``APIResourceList`` (legacy discovery), or the aggregated
``APIGroupDiscoveryList`` (``apidiscovery.k8s.io/v2``) which carries every
resource of every version in one answer. kubectl 1.32 asks for the aggregated
form first; with it, a cold ``kubectl get`` makes two discovery requests
instead of four (see docs/decisions/http.md). The documents never change
while the server runs, so they are encoded to bytes once, with an ETag.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from services.api.types import registry
from services.api.types.registry import ResourceType
from services.apiserver import empty_resources, reviews

GIT_VERSION = "v1.31.0-draplane"

ITEM_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
STATUS_VERBS = ["get", "patch", "update"]
# Namespaces cannot be deleted as a collection in Kubernetes.
_NO_DELETECOLLECTION = frozenset({("", "namespaces")})
_SUBRESOURCE_KIND = {
    "binding": ("", "v1", "Binding"),
    "exec": ("", "v1", "PodExecOptions"),
    "attach": ("", "v1", "PodAttachOptions"),
    "portforward": ("", "v1", "PodPortForwardOptions"),
}
_CONNECT_VERBS = ["create", "get"]
_SUBRESOURCE_VERBS = {
    "status": STATUS_VERBS,
    "binding": ["create"],
    "finalize": ["update"],
    "log": ["get"],
    "exec": _CONNECT_VERBS,
    "attach": _CONNECT_VERBS,
    "portforward": _CONNECT_VERBS,
}


def version_info() -> dict[str, Any]:
    return {
        "major": "1",
        "minor": "31",
        "gitVersion": GIT_VERSION,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2024-08-13T00:00:00Z",
        "goVersion": "go1.22.5",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def verbs(rt: ResourceType) -> list[str]:
    if reviews.is_review(rt):
        return list(reviews.VERBS)
    if empty_resources.holds_nothing(rt):
        return list(empty_resources.VERBS)
    if (rt.group, rt.plural) in _NO_DELETECOLLECTION:
        return [v for v in ITEM_VERBS if v != "deletecollection"]
    return list(ITEM_VERBS)


def _group_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


def groups() -> list[str]:
    seen: list[str] = []
    for r in (*registry.RESOURCES, *reviews.RESOURCES):
        if r.group not in seen:
            seen.append(r.group)
    return seen


def served_versions(group: str) -> tuple[str, ...]:
    """The versions of a group: the registry's, or the review groups' own."""
    return reviews.GROUP_VERSIONS.get(group) or registry.served_versions(group)


def resources_of(group: str) -> list[ResourceType]:
    return [r for r in (*registry.RESOURCES, *empty_resources.RESOURCES, *reviews.RESOURCES) if r.group == group]


def api_resource_list(group: str, version: str) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for rt in sorted(resources_of(group), key=lambda r: r.plural):
        entry: dict[str, Any] = {
            "name": rt.plural,
            "singularName": rt.singular,
            "namespaced": rt.namespaced,
            "kind": rt.kind,
            "verbs": verbs(rt),
        }
        if rt.short_names:
            entry["shortNames"] = list(rt.short_names)
        if rt.categories:
            entry["categories"] = list(rt.categories)
        if not reviews.is_review(rt):  # kept nowhere, so no storage version (as Kubernetes lists them)
            entry["storageVersionHash"] = _hash(f"{group}/{version}/{rt.plural}")
        out.append(entry)
        for sub in sorted(rt.subresources):
            sub_group, sub_version, sub_kind = _SUBRESOURCE_KIND.get(sub, (group, version, rt.kind))
            sub_entry: dict[str, Any] = {
                "name": f"{rt.plural}/{sub}",
                "singularName": "",
                "namespaced": rt.namespaced,
                "kind": sub_kind,
                "verbs": list(_SUBRESOURCE_VERBS.get(sub, STATUS_VERBS)),
            }
            if sub_group != group:
                sub_entry["group"] = sub_group
                sub_entry["version"] = sub_version
            out.append(sub_entry)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": _group_version(group, version),
        "resources": out,
    }


def _hash(text: str) -> str:
    import base64

    return base64.b64encode(hashlib.sha256(text.encode()).digest()[:8]).decode()


def api_group(group: str) -> dict[str, Any]:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in served_versions(group)]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": versions,
        "preferredVersion": versions[0],
    }


def api_group_list() -> dict[str, Any]:
    items = []
    for g in groups():
        if not g:
            continue
        doc = api_group(g)
        doc.pop("kind")
        doc.pop("apiVersion")
        items.append(doc)
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": items}


def api_versions() -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": list(registry.served_versions("")),
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    }


def _aggregated_resource(rt: ResourceType, version: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": rt.plural,
        "responseKind": {"group": rt.group, "version": version, "kind": rt.kind},
        "scope": "Namespaced" if rt.namespaced else "Cluster",
        "singularResource": rt.singular,
        "verbs": verbs(rt),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    subs = []
    for sub in sorted(rt.subresources):
        g, v, k = _SUBRESOURCE_KIND.get(sub, (rt.group, version, rt.kind))
        subs.append(
            {
                "subresource": sub,
                "responseKind": {"group": g, "version": v, "kind": k},
                "verbs": list(_SUBRESOURCE_VERBS.get(sub, STATUS_VERBS)),
            }
        )
    if subs:
        entry["subresources"] = subs
    return entry


def aggregated(core: bool) -> dict[str, Any]:
    """``APIGroupDiscoveryList`` for ``/api`` (core) or ``/apis`` (every named group)."""
    items = []
    for g in groups():
        if (g == "") != core:
            continue
        versions = [
            {
                "version": v,
                "resources": [_aggregated_resource(rt, v) for rt in sorted(resources_of(g), key=lambda r: r.plural)],
                "freshness": "Current",
            }
            for v in served_versions(g)
        ]
        items.append({"metadata": {"name": g, "creationTimestamp": None}, "versions": versions})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}


@dataclass(frozen=True, slots=True)
class Document:
    """An encoded, immutable response body and its ETag."""

    body: bytes
    etag: str

    @classmethod
    def of(cls, doc: Any) -> Document:
        body = orjson.dumps(doc)
        return cls(body, '"' + hashlib.sha256(body).hexdigest()[:32].upper() + '"')


class DiscoveryDocuments:
    """Every discovery answer, encoded once."""

    def __init__(self) -> None:
        self.version = Document.of(version_info())
        self.api = Document.of(api_versions())
        self.apis = Document.of(api_group_list())
        self.aggregated_api = Document.of(aggregated(core=True))
        self.aggregated_apis = Document.of(aggregated(core=False))
        self.groups = {g: Document.of(api_group(g)) for g in groups() if g}
        self.resource_lists = {
            (g, v): Document.of(api_resource_list(g, v)) for g in groups() for v in served_versions(g)
        }
