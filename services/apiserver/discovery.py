"""API discovery documents, built once from the registry.

Clients learn what exists before they do anything: ``/api``, ``/apis`` and the
per group-version ``APIResourceList`` (legacy discovery), or the aggregated
``APIGroupDiscoveryList`` (``apidiscovery.k8s.io/v2``) which carries every
resource of every version in one answer. kubectl 1.32 asks for the aggregated
form first; with it, a cold ``kubectl get`` makes two discovery requests
instead of four (see docs/decisions/http.md). The documents never change
while the server runs, so they are encoded to bytes once, with an ETag.

Each group-version lists the kinds served in it (resource.k8s.io v1 and
v1beta2 have DeviceTaintRule, v1alpha3 PodSchedulingContext), and only the
versions `ServedVersions` serves (``--runtime-config``); the first served
version of a group is its preferred one (resource.k8s.io: v1).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from services.api.types import registry
from services.api.types.registry import ResourceType
from services.api.types.served import DEFAULT_SERVED, ServedVersions
from services.apiserver import reviews
from services.kube.feature_gates import DEFAULT_RELEASE


def git_version(release: str = DEFAULT_RELEASE) -> str:
    """``/version``'s ``gitVersion`` at an emulated release: ``v1.37.0-draplane``, ``v1.31.0-draplane``."""
    return f"v{release}.0-draplane"


ITEM_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
STATUS_VERBS = ["get", "patch", "update"]
# Namespaces cannot be deleted as a collection in Kubernetes.
# Kubernetes' REST storage of these implements no DeleteCollection.
_NO_DELETECOLLECTION = frozenset({("", "namespaces"), ("", "services")})


def deletes_collections(rt: ResourceType) -> bool:
    """Whether DELETE on the collection (``deletecollection``) is served for ``rt``."""
    return (rt.group, rt.plural) not in _NO_DELETECOLLECTION

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


CLIENT_MINOR = "31"
"""``/version``'s ``minor`` at every release: the kubectl that clients on this machine pick by it speaks JSON.

The Cloud SDK kubectl dispatcher (``/usr/bin/kubectl`` here) runs the client
matching the server's ``minor``, and falls back to its own 1.32 client when it
has none (no 1.37); kubectl 1.32 and later send typed creates (``kubectl create
namespace``) as protobuf, which draplane does not read (415). With ``minor`` 31
the dispatcher runs kubectl 1.31, which sends JSON.
"""


def version_info(release: str = DEFAULT_RELEASE) -> dict[str, Any]:
    """``/version`` at ``--emulated-version``'s release.

    Kubernetes (1.33 and later) reports its binary version in
    ``major``/``minor``/``gitVersion`` and the emulated one in
    ``emulationMajor``/``emulationMinor``, with ``minCompatibility*`` one minor
    below (component-base's default). draplane has no binary version of its
    own: ``gitVersion`` and the emulation fields say the emulated release
    (``v1.37.0-draplane``, ``37``), and ``minor`` stays `CLIENT_MINOR`.
    """
    major, _, minor = release.partition(".")
    return {
        "major": major,
        "minor": CLIENT_MINOR,
        "emulationMajor": major,
        "emulationMinor": minor,
        "minCompatibilityMajor": major,
        "minCompatibilityMinor": str(int(minor) - 1),
        "gitVersion": git_version(release),
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
    if not deletes_collections(rt):
        return [v for v in ITEM_VERBS if v != "deletecollection"]
    return list(ITEM_VERBS)


def _group_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


def groups(served: ServedVersions = DEFAULT_SERVED) -> list[str]:
    """Groups with a served version: the registry's, then the review groups'."""
    seen = list(served.groups())
    for r in reviews.RESOURCES:
        if r.group not in seen:
            seen.append(r.group)
    return seen


def served_versions(group: str, served: ServedVersions = DEFAULT_SERVED) -> tuple[str, ...]:
    """The versions of a group: the review groups' own, or the registry's that are served."""
    return reviews.GROUP_VERSIONS.get(group) or served.versions(group)


def resources_of(group: str, version: str, served: ServedVersions = DEFAULT_SERVED) -> list[ResourceType]:
    """The kinds served at ``group/version``."""
    return [
        r
        for r in (*registry.RESOURCES, *reviews.RESOURCES)
        if r.group == group and served.serves_kind(r, version)
    ]


def api_resource_list(group: str, version: str, served: ServedVersions = DEFAULT_SERVED) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for rt in sorted(resources_of(group, version, served), key=lambda r: r.plural):
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
            # Kubernetes hashes the storage version: the same for every version a kind is served in,
            # and for a view (events.k8s.io's Events) the same as the kind it views.
            stored = registry.storage_of(rt)
            entry["storageVersionHash"] = _hash(f"{stored.group}/{stored.stored_as or version}/{stored.plural}")
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


def api_group(group: str, served: ServedVersions = DEFAULT_SERVED) -> dict[str, Any]:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in served_versions(group, served)]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": versions,
        "preferredVersion": versions[0],
    }


def api_group_list(served: ServedVersions = DEFAULT_SERVED) -> dict[str, Any]:
    items = []
    for g in groups(served):
        if not g:
            continue
        doc = api_group(g, served)
        doc.pop("kind")
        doc.pop("apiVersion")
        items.append(doc)
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": items}


def api_versions(served: ServedVersions = DEFAULT_SERVED) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": list(served.versions("")),
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


def aggregated(core: bool, served: ServedVersions = DEFAULT_SERVED) -> dict[str, Any]:
    """``APIGroupDiscoveryList`` for ``/api`` (core) or ``/apis`` (every named group)."""
    items = []
    for g in groups(served):
        if (g == "") != core:
            continue
        versions = [
            {
                "version": v,
                "resources": [
                    _aggregated_resource(rt, v) for rt in sorted(resources_of(g, v, served), key=lambda r: r.plural)
                ],
                "freshness": "Current",
            }
            for v in served_versions(g, served)
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

    def __init__(self, served: ServedVersions = DEFAULT_SERVED, *, release: str = DEFAULT_RELEASE) -> None:
        self.version = Document.of(version_info(release))
        self.api = Document.of(api_versions(served))
        self.apis = Document.of(api_group_list(served))
        self.aggregated_api = Document.of(aggregated(core=True, served=served))
        self.aggregated_apis = Document.of(aggregated(core=False, served=served))
        self.groups = {g: Document.of(api_group(g, served)) for g in groups(served) if g}
        self.resource_lists = {
            (g, v): Document.of(api_resource_list(g, v, served))
            for g in groups(served)
            for v in served_versions(g, served)
        }
