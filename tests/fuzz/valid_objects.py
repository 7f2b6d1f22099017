"""Valid objects of every kind, built from the typed models (`services.api.types`) by hypothesis.

Each strategy draws a model instance (msgspec structs, as components build
them) whose values respect Kubernetes 1.31's rules — written here from the
Kubernetes API reference, not read back from draplane's validators, so a
validator that is stricter than Kubernetes fails the property. Names are DNS
labels or subdomains as each field requires, label keys qualified names,
quantities in resource.Quantity syntax, versions semver 2.0.0, device
selectors CEL expressions of the DRA environment, references (container
claims, constraint and config requests) point at what exists, and sets
(container names, taints, attribute names) have no duplicates.

`from_model` turns an instance into the wire dict validation and the REST
API take.
"""

from __future__ import annotations

import string
from typing import Any, TypeVar

import msgspec
from hypothesis import strategies as st

from services.api.types import coordination_v1, core_v1, meta, resource_v1alpha3
from services.api.types.base import K8sStruct

T = TypeVar("T")

LOWER_ALNUM = string.ascii_lowercase + string.digits
ALNUM = string.ascii_letters + string.digits


def opt(strategy: st.SearchStrategy[T]) -> st.SearchStrategy[T | None]:
    """Unset (None, omitted on the wire) or a value."""
    return st.none() | strategy


# ---------------------------------------------------------------------- names


def _bounded(first: str, middle: str, last: str, max_size: int) -> st.SearchStrategy[str]:
    """``first`` char, up to ``max_size - 2`` of ``middle``, then a ``last`` char (or one char alone)."""
    one = st.sampled_from(first)
    longer = st.builds(
        lambda a, m, z: a + m + z,
        one,
        st.text(middle, max_size=max_size - 2),
        st.sampled_from(last),
    )
    return one | longer


def dns_label(max_size: int = 63) -> st.SearchStrategy[str]:
    return _bounded(LOWER_ALNUM, LOWER_ALNUM + "-", LOWER_ALNUM, max_size)


def dns_subdomain(max_size: int = 253) -> st.SearchStrategy[str]:
    labels = st.lists(dns_label(20), min_size=1, max_size=4)
    return labels.map(".".join).filter(lambda s: len(s) <= max_size)


NAME_PART = _bounded(ALNUM, ALNUM + "-_.", ALNUM, 63)
LABEL_VALUE = st.just("") | NAME_PART
QUALIFIED_NAME = NAME_PART | st.builds(lambda p, n: f"{p}/{n}", dns_subdomain(60), NAME_PART)
DOMAIN_QUALIFIED_NAME = st.builds(lambda p, n: f"{p}/{n}", dns_subdomain(60), NAME_PART)
# CEL's reserved words are C identifiers too, but cannot name a field in an expression.
CEL_RESERVED = frozenset(
    "true false null in as break const continue else for function if import let loop package namespace return var "
    "void while".split()
)
C_IDENTIFIER = st.builds(
    lambda a, rest: a + rest, st.sampled_from(string.ascii_letters + "_"), st.text(ALNUM + "_", max_size=31)
).filter(lambda s: s not in CEL_RESERVED)
DRIVER = dns_subdomain(63)
DRA_QUALIFIED_NAME = C_IDENTIFIER | st.builds(lambda d, c: f"{d}/{c}", DRIVER, C_IDENTIFIER)
FULLY_QUALIFIED_NAME = st.builds(lambda d, c: f"{d}/{c}", DRIVER, C_IDENTIFIER)
UIDS = st.uuids().map(str)
TEXT = st.text(max_size=40)  # any unicode (no surrogates): messages, annotations, images

SEMVER = st.builds(
    lambda a, b, c, pre, build: f"{a}.{b}.{c}{pre}{build}",
    st.integers(0, 99),
    st.integers(0, 99),
    st.integers(0, 999),
    st.sampled_from(["", "-alpha", "-rc.1", "-0.3.7", "-x.7.z.92"]),
    st.sampled_from(["", "+build.5", "+20130313144700"]),
)
QUANTITY = st.builds(
    lambda n, suffix: f"{n}{suffix}",
    st.integers(0, 10**6),
    st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "Ti"]),
) | st.integers(0, 10**9)
TIMES = st.datetimes().map(lambda d: f"{d.year:04d}-" + d.strftime("%m-%dT%H:%M:%SZ"))
MICRO_TIMES = st.datetimes().map(lambda d: f"{d.year:04d}-" + d.strftime("%m-%dT%H:%M:%S.%fZ"))


def unique_by(items: st.SearchStrategy[list[T]], key: Any) -> st.SearchStrategy[list[T]]:
    return items.map(lambda xs: list({key(x): x for x in xs}.values()))


# ---------------------------------------------------------------------- metadata


def labels(max_size: int = 4) -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(QUALIFIED_NAME, LABEL_VALUE, max_size=max_size)


def annotation_maps() -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(QUALIFIED_NAME.map(str.lower), TEXT, max_size=3)


OWNER_REFERENCES = unique_by(
    st.lists(
        st.builds(
            meta.OwnerReference,
            api_version=st.sampled_from(["v1", "resource.k8s.io/v1alpha3", "apps/v1"]),
            kind=st.sampled_from(["Pod", "ResourceClaim", "Deployment"]),
            name=dns_subdomain(60),
            uid=UIDS,
            controller=st.none() | st.just(False),
            block_owner_deletion=opt(st.booleans()),
        ),
        max_size=2,
    ),
    key=lambda ref: ref.uid,
)


def object_meta(
    *, name: st.SearchStrategy[str], namespace: st.SearchStrategy[str] | None, core: bool
) -> st.SearchStrategy[meta.ObjectMeta]:
    finalizer = DOMAIN_QUALIFIED_NAME | (st.sampled_from(["kubernetes"]) if core else DOMAIN_QUALIFIED_NAME)
    return st.builds(
        meta.ObjectMeta,
        name=name,
        namespace=namespace if namespace is not None else st.none(),
        labels=opt(labels()),
        annotations=opt(annotation_maps()),
        finalizers=opt(st.lists(finalizer, max_size=2, unique=True)),
        owner_references=opt(OWNER_REFERENCES),
    )


NAMESPACES = st.sampled_from(["default", "kube-system"]) | dns_label(30)


# ---------------------------------------------------------------------- node selectors

_LABEL_REQUIREMENT = st.one_of(
    st.builds(
        core_v1.NodeSelectorRequirement,
        key=QUALIFIED_NAME,
        operator=st.sampled_from(["In", "NotIn"]),
        values=st.lists(LABEL_VALUE, min_size=1, max_size=3),
    ),
    st.builds(
        core_v1.NodeSelectorRequirement, key=QUALIFIED_NAME, operator=st.sampled_from(["Exists", "DoesNotExist"])
    ),
    st.builds(
        core_v1.NodeSelectorRequirement,
        key=QUALIFIED_NAME,
        operator=st.sampled_from(["Gt", "Lt"]),
        values=st.integers(-1000, 1000).map(lambda i: [str(i)]),
    ),
)
_FIELD_REQUIREMENT = st.builds(
    core_v1.NodeSelectorRequirement,
    key=st.just("metadata.name"),
    operator=st.sampled_from(["In", "NotIn"]),
    values=dns_subdomain(60).map(lambda n: [n]),
)
NODE_SELECTOR_TERM = st.builds(
    core_v1.NodeSelectorTerm,
    match_expressions=opt(st.lists(_LABEL_REQUIREMENT, max_size=2)),
    match_fields=opt(st.lists(_FIELD_REQUIREMENT, max_size=1)),
)


def node_selector(*, terms: int = 3) -> st.SearchStrategy[core_v1.NodeSelector]:
    return st.builds(core_v1.NodeSelector, node_selector_terms=st.lists(NODE_SELECTOR_TERM, min_size=1, max_size=terms))


# ---------------------------------------------------------------------- DRA pieces


_CEL_STRING = st.text(ALNUM, max_size=8)
_CEL_INT = st.integers(-100, 100)
_CEL_GI = st.integers(0, 99)
_CEL_JOIN = st.sampled_from([" && ", " || "])
_CEL_TERMS = st.lists(st.integers(0, 6), min_size=1, max_size=2)


@st.composite
def cel_expression(draw: st.DrawFn) -> str:
    domain, attr = draw(DRIVER), draw(C_IDENTIFIER)
    templates = [
        lambda: f'device.driver == "{draw(DRIVER)}"',
        lambda: f'device.attributes["{domain}"].{attr} == "{draw(_CEL_STRING)}"',
        lambda: f'device.attributes["{domain}"].{attr} > {draw(_CEL_INT)}',
        lambda: f'device.capacity["{domain}"].{attr}.compareTo(quantity("{draw(_CEL_GI)}Gi")) >= 0',
        lambda: f'device.attributes["{domain}"].{attr}.isGreaterThan(semver("{draw(SEMVER)}"))',
        lambda: f'has(device.attributes["{domain}"].{attr})',
        lambda: "true",
    ]
    return draw(_CEL_JOIN).join(templates[i]() for i in draw(_CEL_TERMS))


SELECTORS = st.lists(
    st.builds(
        resource_v1alpha3.DeviceSelector,
        cel=st.builds(resource_v1alpha3.CELDeviceSelector, expression=cel_expression()),
    ),
    max_size=2,
)
PARAMETERS = st.dictionaries(
    st.text(ALNUM, min_size=1, max_size=8),
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | TEXT | st.lists(st.integers(), max_size=2),
    max_size=3,
)
OPAQUE = st.builds(resource_v1alpha3.OpaqueDeviceConfiguration, driver=DRIVER, parameters=PARAMETERS)

# Composites below draw from these module-level strategies: one built inside a
# composite would be re-analysed by hypothesis on every draw.
_MODES = st.sampled_from([None, "ExactCount", "All"])
_COUNTS = opt(st.integers(1, 16))
_OPT_SELECTORS = opt(SELECTORS)
_OPT_BOOL = opt(st.booleans())
_CLASS_NAMES = dns_subdomain(60)
_REQUEST_NAMES = st.lists(dns_label(20), min_size=1, max_size=4, unique=True)
_SMALL_COUNT = st.integers(0, 2)
_SUBSET = st.lists(st.integers(0, 3), max_size=4, unique=True)
_OPT_DRIVER = opt(DRIVER)


def _device_request(draw: st.DrawFn, name: str) -> resource_v1alpha3.DeviceRequest:
    mode = draw(_MODES)
    return resource_v1alpha3.DeviceRequest(
        name=name,
        device_class_name=draw(_CLASS_NAMES),
        selectors=draw(_OPT_SELECTORS),
        allocation_mode=mode,
        count=None if mode == "All" else draw(_COUNTS),
        admin_access=draw(_OPT_BOOL),
    )


@st.composite
def claim_spec(draw: st.DrawFn) -> resource_v1alpha3.ResourceClaimSpec:
    names = draw(_REQUEST_NAMES)

    def some_requests() -> list[str] | None:
        """None (all requests), or some of the claim's request names."""
        if draw(st.booleans()):
            return None
        return [names[i] for i in draw(_SUBSET) if i < len(names)]

    constraints = [
        resource_v1alpha3.DeviceConstraint(requests=some_requests(), match_attribute=draw(FULLY_QUALIFIED_NAME))
        for _ in range(draw(_SMALL_COUNT))
    ]
    configs = [
        resource_v1alpha3.DeviceClaimConfiguration(requests=some_requests(), opaque=draw(OPAQUE))
        for _ in range(draw(_SMALL_COUNT))
    ]
    devices = resource_v1alpha3.DeviceClaim(
        requests=[_device_request(draw, n) for n in names],
        constraints=constraints or None,
        config=configs or None,
    )
    return resource_v1alpha3.ResourceClaimSpec(devices=devices, controller=draw(_OPT_DRIVER))


_ATTRIBUTE_VALUE = st.one_of(
    st.builds(resource_v1alpha3.DeviceAttribute, int_value=st.integers(-(2**63), 2**63 - 1)),
    st.builds(resource_v1alpha3.DeviceAttribute, bool_value=st.booleans()),
    st.builds(
        resource_v1alpha3.DeviceAttribute,
        string=st.text(max_size=64).filter(lambda s: len(s.encode()) <= 64),
    ),
    st.builds(resource_v1alpha3.DeviceAttribute, version=SEMVER),
)
BASIC_DEVICE = st.builds(
    resource_v1alpha3.BasicDevice,
    attributes=opt(st.dictionaries(DRA_QUALIFIED_NAME, _ATTRIBUTE_VALUE, min_size=1, max_size=6)),
    capacity=opt(st.dictionaries(DRA_QUALIFIED_NAME, QUANTITY, min_size=1, max_size=4)),
)
_DEVICES = st.lists(
    st.builds(resource_v1alpha3.Device, name=dns_label(30), basic=BASIC_DEVICE),
    max_size=6,
    unique_by=lambda d: d.name,
)
_WHERE = st.sampled_from(["node", "selector", "all"])
_POOL_NAMES = st.lists(dns_subdomain(40), min_size=1, max_size=3).map("/".join)
_GENERATIONS = st.integers(0, 2**40)
_SLICE_COUNTS = st.integers(1, 2**20)
_NODE_NAMES = dns_subdomain(60)


@st.composite
def slice_spec(draw: st.DrawFn) -> resource_v1alpha3.ResourceSliceSpec:
    where = draw(_WHERE)
    devices = draw(_DEVICES)
    return resource_v1alpha3.ResourceSliceSpec(
        driver=draw(DRIVER),
        pool=resource_v1alpha3.ResourcePool(
            name=draw(_POOL_NAMES),
            generation=draw(_GENERATIONS),
            resource_slice_count=draw(_SLICE_COUNTS),
        ),
        node_name=draw(_NODE_NAMES) if where == "node" else None,
        node_selector=draw(node_selector(terms=1)) if where == "selector" else None,
        all_nodes=True if where == "all" else None,
        devices=devices or None,
    )


# ---------------------------------------------------------------------- the kinds


def resource_claims(namespace: st.SearchStrategy[str] = NAMESPACES) -> st.SearchStrategy[K8sStruct]:
    return st.builds(
        resource_v1alpha3.ResourceClaim,
        metadata=object_meta(name=dns_subdomain(), namespace=namespace, core=False),
        spec=claim_spec(),
    )


def resource_claim_templates(namespace: st.SearchStrategy[str] = NAMESPACES) -> st.SearchStrategy[K8sStruct]:
    template_meta = st.builds(meta.ObjectMeta, labels=opt(labels()), annotations=opt(annotation_maps()))
    return st.builds(
        resource_v1alpha3.ResourceClaimTemplate,
        metadata=object_meta(name=dns_subdomain(), namespace=namespace, core=False),
        spec=st.builds(resource_v1alpha3.ResourceClaimTemplateSpec, metadata=opt(template_meta), spec=claim_spec()),
    )


def device_classes(namespace: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[K8sStruct]:
    config = st.lists(st.builds(resource_v1alpha3.DeviceClassConfiguration, opaque=OPAQUE), max_size=2)
    return st.builds(
        resource_v1alpha3.DeviceClass,
        metadata=object_meta(name=dns_subdomain(), namespace=None, core=False),
        spec=st.builds(
            resource_v1alpha3.DeviceClassSpec,
            selectors=opt(SELECTORS),
            config=opt(config),
            suitable_nodes=opt(node_selector()),
        ),
    )


def resource_slices(namespace: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[K8sStruct]:
    return st.builds(
        resource_v1alpha3.ResourceSlice,
        metadata=object_meta(name=dns_subdomain(), namespace=None, core=False),
        spec=slice_spec(),
    )


def pod_scheduling_contexts(namespace: st.SearchStrategy[str] = NAMESPACES) -> st.SearchStrategy[K8sStruct]:
    nodes = st.lists(dns_subdomain(60), max_size=5, unique=True)
    return st.builds(
        resource_v1alpha3.PodSchedulingContext,
        metadata=object_meta(name=dns_subdomain(), namespace=namespace, core=False),
        spec=st.builds(
            resource_v1alpha3.PodSchedulingContextSpec, selected_node=opt(dns_subdomain(60)), potential_nodes=opt(nodes)
        ),
    )


IMAGES = st.builds(lambda r, t: f"{r}:{t}", dns_subdomain(30), st.text(ALNUM + "._-", min_size=1, max_size=10))
_TOLERATION = st.one_of(
    st.builds(
        core_v1.Toleration,
        key=opt(QUALIFIED_NAME),
        operator=st.just("Exists"),
        effect=opt(st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])),
    ),
    st.builds(
        core_v1.Toleration,
        key=QUALIFIED_NAME,
        operator=st.sampled_from([None, "Equal"]),
        value=opt(LABEL_VALUE),
        effect=opt(st.sampled_from(["NoSchedule", "PreferNoSchedule"])),
    ),
    st.builds(
        core_v1.Toleration,
        key=QUALIFIED_NAME,
        operator=st.sampled_from([None, "Equal"]),
        value=opt(LABEL_VALUE),
        effect=st.just("NoExecute"),
        toleration_seconds=opt(st.integers(-10, 3600)),
    ),
)


_CLAIM_NAMES = st.lists(dns_label(20), max_size=3, unique=True)
_CONTAINER_NAMES = st.lists(dns_label(30), min_size=1, max_size=5, unique=True)
_MILLICPU = st.integers(1, 4000)
_HEADROOM = st.integers(0, 1000)
_MEBIBYTES = st.integers(1, 64)
_CLAIM_PICKS = st.lists(st.integers(0, 2), max_size=3, unique=True)
_OPT_STRINGS = opt(st.lists(TEXT, max_size=2))
_PULL_POLICIES = opt(st.sampled_from(["Always", "IfNotPresent", "Never"]))
_MESSAGE_POLICIES = opt(st.sampled_from(["File", "FallbackToLogsOnError"]))
_OPT_NODE_NAME = opt(dns_subdomain(60))
_GATES = st.lists(QUALIFIED_NAME, max_size=2, unique=True)
_AFFINITY = opt(
    st.builds(
        core_v1.Affinity,
        node_affinity=st.builds(
            core_v1.NodeAffinity, required_during_scheduling_ignored_during_execution=node_selector()
        ),
    )
)
_RESTART_POLICIES = opt(st.sampled_from(["Always", "OnFailure", "Never"]))
_DNS_POLICIES = opt(st.sampled_from(["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]))
_NODE_SELECTOR = opt(labels())
_TOLERATIONS = opt(st.lists(_TOLERATION, max_size=3))
_GRACE = opt(st.integers(0, 3600))
_DEADLINE = opt(st.integers(1, 2**31 - 1))
_PRIORITY = opt(st.integers(-(2**31), 2**31 - 1))
_HOSTNAME = opt(dns_label())
_SCHEDULER = opt(st.just("default-scheduler"))


@st.composite
def pod_spec(draw: st.DrawFn) -> core_v1.PodSpec:
    claim_names = draw(_CLAIM_NAMES)
    pod_claims = [
        core_v1.PodResourceClaim(name=n, resource_claim_name=draw(_NODE_NAMES))
        if draw(st.booleans())
        else core_v1.PodResourceClaim(name=n, resource_claim_template_name=draw(_NODE_NAMES))
        for n in claim_names
    ]
    container_names = draw(_CONTAINER_NAMES)
    regular = draw(st.integers(1, len(container_names)))

    def container(name: str) -> core_v1.Container:
        cpu, memory = draw(_MILLICPU), draw(_MEBIBYTES)
        # Requests never exceed limits.
        requests: dict[str, Any] = {"cpu": f"{cpu}m", "memory": f"{memory}Mi"}
        limits: dict[str, Any] = {"cpu": f"{cpu + draw(_HEADROOM)}m", "memory": f"{memory}Mi"}
        claims = [claim_names[i] for i in draw(_CLAIM_PICKS) if i < len(claim_names)]
        return core_v1.Container(
            name=name,
            image=draw(IMAGES),
            command=draw(_OPT_STRINGS),
            args=draw(_OPT_STRINGS),
            resources=core_v1.ResourceRequirements(
                requests=requests if draw(st.booleans()) else None,
                limits=limits if draw(st.booleans()) else None,
                claims=[core_v1.ResourceClaim(name=c) for c in claims] or None,
            ),
            image_pull_policy=draw(_PULL_POLICIES),
            termination_message_policy=draw(_MESSAGE_POLICIES),
        )

    node_name = draw(_OPT_NODE_NAME)
    gates = [] if node_name else draw(_GATES)  # a pod bound on create has no scheduling gates
    return core_v1.PodSpec(
        containers=[container(n) for n in container_names[:regular]],
        init_containers=[container(n) for n in container_names[regular:]] or None,
        resource_claims=pod_claims or None,
        restart_policy=draw(_RESTART_POLICIES),
        dns_policy=draw(_DNS_POLICIES),
        node_selector=draw(_NODE_SELECTOR),
        node_name=node_name,
        scheduling_gates=[core_v1.PodSchedulingGate(name=g) for g in gates] or None,
        tolerations=draw(_TOLERATIONS),
        affinity=draw(_AFFINITY),
        termination_grace_period_seconds=draw(_GRACE),
        active_deadline_seconds=draw(_DEADLINE),
        priority=draw(_PRIORITY),
        hostname=draw(_HOSTNAME),
        scheduler_name=draw(_SCHEDULER),
    )


def pods(namespace: st.SearchStrategy[str] = NAMESPACES) -> st.SearchStrategy[K8sStruct]:
    return st.builds(
        core_v1.Pod, metadata=object_meta(name=dns_subdomain(), namespace=namespace, core=True), spec=pod_spec()
    )


_TAINTS = st.lists(
    st.builds(
        core_v1.Taint,
        key=QUALIFIED_NAME,
        value=opt(LABEL_VALUE),
        effect=st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"]),
    ),
    max_size=4,
    unique_by=lambda t: (t.key, t.effect),
)
_RESOURCES = st.fixed_dictionaries(
    {},
    optional={
        "cpu": st.integers(1, 256).map(str),
        "memory": st.integers(1, 1024).map(lambda g: f"{g}Gi"),
        "pods": st.integers(1, 250).map(str),
        "example.com/gpu": st.integers(0, 8).map(str),
    },
)


def nodes(namespace: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[K8sStruct]:
    return st.builds(
        core_v1.Node,
        metadata=object_meta(name=dns_subdomain(), namespace=None, core=True),
        spec=st.builds(core_v1.NodeSpec, unschedulable=opt(st.booleans()), taints=opt(_TAINTS)),
        status=opt(st.builds(core_v1.NodeStatus, capacity=opt(_RESOURCES), allocatable=opt(_RESOURCES))),
    )


def namespaces(namespace: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[K8sStruct]:
    finalizers = st.lists(st.just("kubernetes") | DOMAIN_QUALIFIED_NAME, max_size=2, unique=True)
    return st.builds(
        core_v1.Namespace,
        metadata=object_meta(name=dns_label(), namespace=None, core=True),
        spec=opt(st.builds(core_v1.NamespaceSpec, finalizers=opt(finalizers))),
    )


_INVOLVED_KINDS = st.sampled_from(["Pod", "ResourceClaim", "Node"])
_OPT_UID = opt(UIDS)
_OPT_API_VERSION = opt(st.sampled_from(["v1", "resource.k8s.io/v1alpha3"]))
_EVENT_META = object_meta(name=dns_subdomain(), namespace=None, core=True)
_EVENT_TYPES = opt(st.sampled_from(["Normal", "Warning"]))
_REASONS = st.text(ALNUM, min_size=1, max_size=20)
_OPT_REASON = opt(st.text(ALNUM, max_size=20))
_OPT_TEXT = opt(TEXT)
_SOURCES = opt(st.builds(core_v1.EventSource, component=opt(dns_label()), host=opt(dns_subdomain(60))))
_OPT_TIMES = opt(TIMES)
_OPT_COUNT = opt(st.integers(1, 1000))
_INSTANCES = st.text(ALNUM + "-", min_size=1, max_size=40)
_SERIES = opt(st.builds(core_v1.EventSeries, count=st.integers(1, 100), last_observed_time=MICRO_TIMES))


@st.composite
def events(draw: st.DrawFn, namespace: st.SearchStrategy[str] = NAMESPACES) -> K8sStruct:
    ns = draw(namespace)  # a legacy event lives in its involved object's namespace
    involved = core_v1.ObjectReference(
        kind=draw(_INVOLVED_KINDS),
        namespace=ns,
        name=draw(_NODE_NAMES),
        uid=draw(_OPT_UID),
        api_version=draw(_OPT_API_VERSION),
    )
    common: dict[str, Any] = {
        "metadata": msgspec.structs.replace(draw(_EVENT_META), namespace=ns),
        "involved_object": involved,
        "type": draw(_EVENT_TYPES),
    }
    if draw(st.booleans()):  # a legacy event
        return core_v1.Event(
            **common,
            reason=draw(_OPT_REASON),
            message=draw(_OPT_TEXT),
            source=draw(_SOURCES),
            first_timestamp=draw(_OPT_TIMES),
            last_timestamp=draw(_OPT_TIMES),
            count=draw(_OPT_COUNT),
        )
    return core_v1.Event(  # a new-style event (events.k8s.io/v1 written through core/v1)
        **common,
        event_time=draw(MICRO_TIMES),
        reporting_component=draw(QUALIFIED_NAME),
        reporting_instance=draw(_INSTANCES),
        action=draw(_REASONS),
        reason=draw(_REASONS),
        message=draw(_OPT_TEXT),
        series=draw(_SERIES),
    )


def leases(namespace: st.SearchStrategy[str] = NAMESPACES) -> st.SearchStrategy[K8sStruct]:
    return st.builds(
        coordination_v1.Lease,
        metadata=object_meta(name=dns_subdomain(), namespace=namespace, core=False),
        spec=opt(
            st.builds(
                coordination_v1.LeaseSpec,
                holder_identity=opt(TEXT),
                lease_duration_seconds=opt(st.integers(1, 2**31 - 1)),
                lease_transitions=opt(st.integers(0, 2**31 - 1)),
                acquire_time=opt(MICRO_TIMES),
                renew_time=opt(MICRO_TIMES),
            )
        ),
    )


VALID_OBJECTS: dict[str, Any] = {
    "Namespace": namespaces,
    "Node": nodes,
    "Pod": pods,
    "Event": events,
    "DeviceClass": device_classes,
    "ResourceClaim": resource_claims,
    "ResourceClaimTemplate": resource_claim_templates,
    "ResourceSlice": resource_slices,
    "PodSchedulingContext": pod_scheduling_contexts,
    "Lease": leases,
}
