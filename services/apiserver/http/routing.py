"""Resource URLs to (group, version, resource, namespace, name, subresource).

Kubernetes' URL grammar (``k8s.io/apiserver/pkg/endpoints/request/requestinfo.go``):

    /api/v1[/watch][/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]
    /apis/{group}/{version}[/watch][/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]

with one twist: ``/api/v1/namespaces/{name}/status`` is the namespace's own
subresource, not a resource called ``status`` inside it. One hand-written
parser serves every resource, faster than a regex route per resource and
exact about which combinations exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.api.types import registry
from services.api.types.registry import ResourceType
from services.api.types.served import DEFAULT_SERVED, ServedVersions
from services.apiserver import reviews
from services.apiserver.http.errors import not_found_path

_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
_GROUPS = frozenset(r.group for r in registry.RESOURCES) | frozenset(reviews.GROUP_VERSIONS)


@dataclass(frozen=True, slots=True)
class ResourceRoute:
    rt: ResourceType
    version: str  # the API version in the URL
    namespace: str | None  # None: cluster-scoped, or all namespaces
    name: str | None
    subresource: str | None = None
    watch_path: bool = False  # the deprecated /watch/ prefix


@dataclass(frozen=True, slots=True)
class GroupVersion:
    group: str
    version: str | None  # None for /apis/{group}


def is_served(group: str, version: str, served: ServedVersions = DEFAULT_SERVED) -> bool:
    if group in reviews.GROUP_VERSIONS:
        return version in reviews.GROUP_VERSIONS[group]
    return group in _GROUPS and served.serves(group, version)


def parse(path: str, served: ServedVersions = DEFAULT_SERVED) -> ResourceRoute | GroupVersion | None:
    """Parse an ``/api`` or ``/apis`` path; None when it is neither.

    Raises the 404 Status for paths under them that name nothing served
    (a version turned off by ``--runtime-config``, a kind not in the version).
    """
    segs = [s for s in path.split("/") if s]
    if not segs:
        return None
    head = segs[0]
    if head == "api":
        if len(segs) < 2:
            return None
        group, version, rest = "", segs[1], segs[2:]
    elif head == "apis":
        if len(segs) < 2:
            return None
        if len(segs) == 2:
            if segs[1] in _GROUPS and segs[1] and (served.versions(segs[1]) or segs[1] in reviews.GROUP_VERSIONS):
                return GroupVersion(segs[1], None)
            raise not_found_path()
        group, version, rest = segs[1], segs[2], segs[3:]
    else:
        return None
    if not is_served(group, version, served):
        raise not_found_path()
    if not rest:
        return GroupVersion(group, version)
    watch = rest[0] == "watch"
    if watch:
        rest = rest[1:]
        if not rest:
            raise not_found_path()
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        raise not_found_path()
    rt = registry.by_resource(group, rest[0]) or reviews.by_resource(group, rest[0])
    if rt is None or version not in rt.versions:
        raise not_found_path()
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    if namespace is not None and not rt.namespaced:
        raise not_found_path()
    if rt.namespaced and namespace is None and name is not None:
        raise not_found_path()
    if sub is not None and (sub not in rt.subresources or watch):
        raise not_found_path()
    return ResourceRoute(rt, version, namespace, name, sub, watch)
