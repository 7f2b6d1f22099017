"""The table of every resource draplane serves.

One row per resource: its group, served versions, kind, plural, whether it is
namespaced, short names, categories and subresources. Discovery, routing,
admission and the log's object keys all read this table.
"""

from __future__ import annotations

from dataclasses import dataclass

CORE = ""
RESOURCE_GROUP = "resource.k8s.io"
V1ALPHA3 = "v1alpha3"
COORDINATION_GROUP = "coordination.k8s.io"


@dataclass(frozen=True, slots=True)
class ResourceType:
    group: str
    version: str  # the storage (internal) version; others convert at the edge
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    list_kind: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources


RESOURCES: tuple[ResourceType, ...] = (
    ResourceType(
        CORE, "v1", "Namespace", "namespaces", "namespace", False, ("ns",), (), ("status", "finalize"), "NamespaceList"
    ),
    ResourceType(CORE, "v1", "Node", "nodes", "node", False, ("no",), (), ("status",), "NodeList"),
    ResourceType(
        CORE,
        "v1",
        "Pod",
        "pods",
        "pod",
        True,
        ("po",),
        ("all",),
        # log, exec, attach, portforward: answered, though the simulated nodes have nothing to stream.
        ("status", "binding", "log", "exec", "attach", "portforward"),
        "PodList",
    ),
    ResourceType(CORE, "v1", "Event", "events", "event", True, ("ev",), (), (), "EventList"),
    ResourceType(
        RESOURCE_GROUP, V1ALPHA3, "DeviceClass", "deviceclasses", "deviceclass", False, (), (), (), "DeviceClassList"
    ),
    ResourceType(
        RESOURCE_GROUP,
        V1ALPHA3,
        "ResourceClaim",
        "resourceclaims",
        "resourceclaim",
        True,
        (),
        (),
        ("status",),
        "ResourceClaimList",
    ),
    ResourceType(
        RESOURCE_GROUP,
        V1ALPHA3,
        "ResourceClaimTemplate",
        "resourceclaimtemplates",
        "resourceclaimtemplate",
        True,
        (),
        (),
        (),
        "ResourceClaimTemplateList",
    ),
    ResourceType(
        RESOURCE_GROUP,
        V1ALPHA3,
        "ResourceSlice",
        "resourceslices",
        "resourceslice",
        False,
        (),
        (),
        (),
        "ResourceSliceList",
    ),
    ResourceType(
        RESOURCE_GROUP,
        V1ALPHA3,
        "PodSchedulingContext",
        "podschedulingcontexts",
        "podschedulingcontext",
        True,
        (),
        (),
        ("status",),
        "PodSchedulingContextList",
    ),
    # Node heartbeats (kube-node-lease) and leader election.
    ResourceType(COORDINATION_GROUP, "v1", "Lease", "leases", "lease", True, (), (), (), "LeaseList"),
)

_BY_GROUP_RESOURCE = {(r.group, r.plural): r for r in RESOURCES}
_BY_GROUP_KIND = {(r.group, r.kind): r for r in RESOURCES}


def by_resource(group: str, plural: str) -> ResourceType | None:
    return _BY_GROUP_RESOURCE.get((group, plural))


def by_kind(group: str, kind: str) -> ResourceType | None:
    return _BY_GROUP_KIND.get((group, kind))


def by_api_version_kind(api_version: str, kind: str) -> ResourceType | None:
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else CORE
    return by_kind(group, kind)


def served_versions(group: str) -> tuple[str, ...]:
    """Versions served per group; new versions are added here with a conversion."""
    return ("v1",) if group in (CORE, COORDINATION_GROUP) else (V1ALPHA3,)
