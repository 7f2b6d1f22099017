"""The table of every resource draplane serves.

One row per resource: its group, storage version, the versions it is served
in, kind, plural, whether it is namespaced, short names, categories and
subresources. Discovery, routing, OpenAPI, admission and the log's object keys
all read this table.

resource.k8s.io is stored in one hub form whatever version a client speaks
(docs/decisions/api-versions.md): its rows name `INTERNAL` as the storage
version and the apiVersion stamped on stored records (``stored_as``); the REST
edge and the committer convert between the versions a kind is served in and
that form (`services.api.machinery.conversion`). Which versions a running
apiserver serves is `services.api.types.served`.

A *view* row (``view_of`` set) is served in its own group but stored as the
row of the same plural in group ``view_of``: events.k8s.io/v1 Events are core
Events (one storage, two groups, as in Kubernetes). Everything below the REST
edge — requests, the committer, keys, admission — names the storage row and
speaks the view's version *qualified*, ``events.k8s.io/v1``
(`qualified_version`); the conversion table holds the functions between the
storage version and that qualified version
(docs/decisions/upstream-kinds.md, "Events").
"""

from __future__ import annotations

from dataclasses import dataclass

CORE = ""
RESOURCE_GROUP = "resource.k8s.io"
V1 = "v1"
V1BETA2 = "v1beta2"
V1BETA1 = "v1beta1"
V1ALPHA3 = "v1alpha3"
COORDINATION_GROUP = "coordination.k8s.io"
APPS_GROUP = "apps"
POLICY_GROUP = "policy"
STORAGE_GROUP = "storage.k8s.io"
EVENTS_GROUP = "events.k8s.io"
# The storage (hub) form's name in the conversion table, Kubernetes' runtime.APIVersionInternal:
# never served, never on the wire.
INTERNAL = "__internal"
# The version stamped on stored resource.k8s.io records: the hub is v1beta1's layout
# (plus 1.31's classic fields), and Kubernetes 1.32-1.34 stored the group as v1beta1.
STORED_AS = V1BETA1
# resource.k8s.io versions, preferred first (1.37 serves v1, v1beta2, v1beta1; 1.31 v1alpha3).
RESOURCE_VERSIONS = (V1, V1BETA2, V1BETA1, V1ALPHA3)


@dataclass(frozen=True, slots=True)
class ResourceType:
    group: str
    version: str  # the storage version (`INTERNAL` for resource.k8s.io); served versions convert to it
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    list_kind: str = ""
    versions: tuple[str, ...] = ("v1",)  # served, preferred first
    stored_as: str = ""  # the version stamped on stored records when ``version`` is `INTERNAL`
    view_of: str | None = None  # a view: stored as the row of the same plural in this group

    @property
    def api_version(self) -> str:
        """The apiVersion of stored records."""
        version = self.stored_as or self.version
        return f"{self.group}/{version}" if self.group else version

    @property
    def preferred_version(self) -> str:
        return self.versions[0]

    def api_version_of(self, version: str) -> str:
        """``group/version`` for one of this kind's versions (the stored stamp for `INTERNAL`)."""
        if version == self.version:
            return self.api_version
        return f"{self.group}/{version}" if self.group else version

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
        RESOURCE_GROUP,
        INTERNAL,
        "DeviceClass",
        "deviceclasses",
        "deviceclass",
        False,
        (),
        (),
        (),
        "DeviceClassList",
        versions=RESOURCE_VERSIONS,
        stored_as=STORED_AS,
    ),
    ResourceType(
        RESOURCE_GROUP,
        INTERNAL,
        "ResourceClaim",
        "resourceclaims",
        "resourceclaim",
        True,
        (),
        (),
        ("status",),
        "ResourceClaimList",
        versions=RESOURCE_VERSIONS,
        stored_as=STORED_AS,
    ),
    ResourceType(
        RESOURCE_GROUP,
        INTERNAL,
        "ResourceClaimTemplate",
        "resourceclaimtemplates",
        "resourceclaimtemplate",
        True,
        (),
        (),
        (),
        "ResourceClaimTemplateList",
        versions=RESOURCE_VERSIONS,
        stored_as=STORED_AS,
    ),
    ResourceType(
        RESOURCE_GROUP,
        INTERNAL,
        "ResourceSlice",
        "resourceslices",
        "resourceslice",
        False,
        (),
        (),
        (),
        "ResourceSliceList",
        versions=RESOURCE_VERSIONS,
        stored_as=STORED_AS,
    ),
    ResourceType(
        RESOURCE_GROUP,
        INTERNAL,
        "DeviceTaintRule",
        "devicetaintrules",
        "devicetaintrule",
        False,
        (),
        (),
        ("status",),
        "DeviceTaintRuleList",
        versions=(V1, V1BETA2),
        stored_as=V1,
    ),
    ResourceType(
        RESOURCE_GROUP,
        INTERNAL,
        "PodSchedulingContext",
        "podschedulingcontexts",
        "podschedulingcontext",
        True,
        (),
        (),
        ("status",),
        "PodSchedulingContextList",
        versions=(V1ALPHA3,),
        stored_as=V1ALPHA3,
    ),
    # Node heartbeats (kube-node-lease) and leader election.
    ResourceType(COORDINATION_GROUP, "v1", "Lease", "leases", "lease", True, (), (), (), "LeaseList"),
    # Kinds draplane only stores, so that upstream kube-scheduler's and
    # kube-controller-manager's informers sync (docs/decisions/upstream-kinds.md).
    # Their scale subresources are not served.
    ResourceType(
        CORE,
        "v1",
        "PersistentVolume",
        "persistentvolumes",
        "persistentvolume",
        False,
        ("pv",),
        (),
        ("status",),
        "PersistentVolumeList",
    ),
    ResourceType(
        CORE,
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "persistentvolumeclaim",
        True,
        ("pvc",),
        (),
        ("status",),
        "PersistentVolumeClaimList",
    ),
    ResourceType(CORE, "v1", "Service", "services", "service", True, ("svc",), ("all",), ("status",), "ServiceList"),
    ResourceType(
        CORE,
        "v1",
        "ReplicationController",
        "replicationcontrollers",
        "replicationcontroller",
        True,
        ("rc",),
        ("all",),
        ("status",),
        "ReplicationControllerList",
    ),
    ResourceType(
        APPS_GROUP,
        "v1",
        "ReplicaSet",
        "replicasets",
        "replicaset",
        True,
        ("rs",),
        ("all",),
        ("status",),
        "ReplicaSetList",
    ),
    ResourceType(
        APPS_GROUP,
        "v1",
        "StatefulSet",
        "statefulsets",
        "statefulset",
        True,
        ("sts",),
        ("all",),
        ("status",),
        "StatefulSetList",
    ),
    ResourceType(
        POLICY_GROUP,
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        True,
        ("pdb",),
        (),
        ("status",),
        "PodDisruptionBudgetList",
    ),
    ResourceType(
        STORAGE_GROUP,
        "v1",
        "StorageClass",
        "storageclasses",
        "storageclass",
        False,
        ("sc",),
        (),
        (),
        "StorageClassList",
    ),
    ResourceType(STORAGE_GROUP, "v1", "CSINode", "csinodes", "csinode", False, (), (), (), "CSINodeList"),
    ResourceType(STORAGE_GROUP, "v1", "CSIDriver", "csidrivers", "csidriver", False, (), (), (), "CSIDriverList"),
    ResourceType(
        STORAGE_GROUP,
        "v1",
        "CSIStorageCapacity",
        "csistoragecapacities",
        "csistoragecapacity",
        True,
        (),
        (),
        (),
        "CSIStorageCapacityList",
    ),
    # The second view of core Events (docs/decisions/upstream-kinds.md): kube-scheduler's and
    # kube-controller-manager's EventBroadcaster writes here.
    ResourceType(EVENTS_GROUP, "v1", "Event", "events", "event", True, ("ev",), (), (), "EventList", view_of=CORE),
)

# The rows with a storage of their own (every row but the views): what controllers act on.
STORED_RESOURCES: tuple[ResourceType, ...] = tuple(r for r in RESOURCES if r.view_of is None)
_BY_GROUP_RESOURCE = {(r.group, r.plural): r for r in RESOURCES}
_BY_GROUP_KIND = {(r.group, r.kind): r for r in RESOURCES}
# storage row → {qualified version: view row}
_VIEWS: dict[tuple[str, str], dict[str, ResourceType]] = {}
for _r in RESOURCES:
    if _r.view_of is not None:
        for _v in _r.versions:
            _VIEWS.setdefault((_r.view_of, _r.plural), {})[f"{_r.group}/{_v}"] = _r


def storage_of(rt: ResourceType) -> ResourceType:
    """The row whose storage ``rt`` uses: itself, or for a view the row it views."""
    if rt.view_of is None:
        return rt
    return _BY_GROUP_RESOURCE[(rt.view_of, rt.plural)]


def qualified_version(rt: ResourceType, version: str) -> str:
    """The version a request through ``rt`` speaks below the REST edge: ``version``, or for a view
    ``group/version`` (what the storage row's conversions and the committer know it by)."""
    return f"{rt.group}/{version}" if rt.view_of is not None else version


def view_for(storage: ResourceType, version: str) -> tuple[ResourceType, str]:
    """The row and plain version a (possibly qualified) ``version`` of ``storage`` names:
    ``(storage, version)``, or for a view's qualified version ``(view row, its version)``."""
    view = _VIEWS.get((storage.group, storage.plural), {}).get(version)
    if view is None:
        return storage, version
    return view, version.rpartition("/")[2]


def view_versions(storage: ResourceType) -> tuple[str, ...]:
    """The qualified versions of the views stored as ``storage`` (``events.k8s.io/v1`` for core Events)."""
    return tuple(_VIEWS.get((storage.group, storage.plural), {}))


def by_resource(group: str, plural: str) -> ResourceType | None:
    return _BY_GROUP_RESOURCE.get((group, plural))


def by_kind(group: str, kind: str) -> ResourceType | None:
    return _BY_GROUP_KIND.get((group, kind))


def by_api_version_kind(api_version: str, kind: str) -> ResourceType | None:
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else CORE
    return by_kind(group, kind)


def served_versions(group: str) -> tuple[str, ...]:
    """Every version of a group some kind is served in, preferred first (all enabled)."""
    return tuple(dict.fromkeys(v for r in RESOURCES if r.group == group for v in r.versions))
