"""Server-side table printers of the kinds draplane only stores.

PersistentVolumes, PersistentVolumeClaims, Services, ReplicationControllers,
ReplicaSets, StatefulSets, PodDisruptionBudgets, StorageClasses, CSINodes,
CSIDrivers and CSIStorageCapacities are served so that upstream
kube-scheduler's and kube-controller-manager's informers sync
(docs/decisions/upstream-kinds.md); ``kubectl get`` on them prints the columns
of ``pkg/printers/internalversion/printers.go`` (Kubernetes 1.31), wide columns
always filled as the server does. Column descriptions come from Kubernetes'
schemas where its printers take them from the Go doc. Pure.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from services.api.types.schemas import schemas
from services.apiserver.table_cells import AGE, NAME, Cell, Printer, Row, age, col, name
from services.kube.labels import format_label_selector, format_labels

_CORE = "io.k8s.api.core.v1."
_APPS = "io.k8s.api.apps.v1."
_STORAGE = "io.k8s.api.storage.v1."
_CONTAINERS = "Names of each container in the template."
_IMAGES = "Images referenced by each container in the template."


@cache
def _doc(definition: str, field: str) -> str:
    """A field's description in Kubernetes 1.31's schema (its Go doc, as ``SwaggerDoc()`` gives it)."""
    prop = schemas("1.31").get(definition).properties.get(field)
    return prop.description if prop else ""


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("spec") or {}


def _status(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("status") or {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _containers(template: dict[str, Any] | None) -> tuple[str, str]:
    """``layoutContainerCells``: container names and images, comma-separated."""
    containers = ((template or {}).get("spec") or {}).get("containers") or []
    names = ",".join(str(c.get("name") or "") for c in containers if isinstance(c, dict))
    images = ",".join(str(c.get("image") or "") for c in containers if isinstance(c, dict))
    return names, images


_ACCESS_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def access_modes(modes: Any) -> str:
    """``helper.GetAccessModesAsString``: RWO, ROX, RWX, RWOP in that order, each once."""
    present = set(modes) if isinstance(modes, list) else set()
    return ",".join(short for mode, short in _ACCESS_MODES if mode in present)


def _phase(obj: dict[str, Any]) -> str:
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    return str(_status(obj).get("phase") or "")


def _class_name(obj: dict[str, Any]) -> str:
    """``GetPersistentVolume(Claim)Class``: the beta annotation wins over ``spec.storageClassName``."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    beta = annotations.get("volume.beta.kubernetes.io/storage-class")
    return str(beta) if beta is not None else str(_spec(obj).get("storageClassName") or "")


def _unset(value: Any) -> str:
    return "<unset>" if value is None else str(value)


# ------------------------------------------------------------------ core/v1

PV_COLUMNS = [
    NAME,
    col("Capacity", _doc(_CORE + "PersistentVolumeSpec", "capacity")),
    col("Access Modes", _doc(_CORE + "PersistentVolumeSpec", "accessModes")),
    col("Reclaim Policy", _doc(_CORE + "PersistentVolumeSpec", "persistentVolumeReclaimPolicy")),
    col("Status", _doc(_CORE + "PersistentVolumeStatus", "phase")),
    col("Claim", _doc(_CORE + "PersistentVolumeSpec", "claimRef")),
    col("StorageClass", "StorageClass of the pv"),
    col("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
    col("Reason", _doc(_CORE + "PersistentVolumeStatus", "reason")),
    AGE,
    col("VolumeMode", _doc(_CORE + "PersistentVolumeSpec", "volumeMode"), priority=1),
]


def print_persistent_volume(pv: dict[str, Any], now: float) -> Row:
    spec = _spec(pv)
    ref = spec.get("claimRef")
    claim = f"{ref.get('namespace') or ''}/{ref.get('name') or ''}" if isinstance(ref, dict) else ""
    return [
        name(pv),
        str((spec.get("capacity") or {}).get("storage") or "0"),
        access_modes(spec.get("accessModes")),
        str(spec.get("persistentVolumeReclaimPolicy") or ""),
        _phase(pv),
        claim,
        _class_name(pv),
        _unset(spec.get("volumeAttributesClassName")),
        str(_status(pv).get("reason") or ""),
        age(pv, now),
        _unset(spec.get("volumeMode")),
    ]


PVC_COLUMNS = [
    NAME,
    col("Status", _doc(_CORE + "PersistentVolumeClaimStatus", "phase")),
    col("Volume", _doc(_CORE + "PersistentVolumeClaimSpec", "volumeName")),
    col("Capacity", _doc(_CORE + "PersistentVolumeClaimStatus", "capacity")),
    col("Access Modes", _doc(_CORE + "PersistentVolumeClaimStatus", "accessModes")),
    col("StorageClass", "StorageClass of the pvc"),
    col("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
    AGE,
    col("VolumeMode", _doc(_CORE + "PersistentVolumeClaimSpec", "volumeMode"), priority=1),
]


def print_persistent_volume_claim(pvc: dict[str, Any], now: float) -> Row:
    spec, status = _spec(pvc), _status(pvc)
    capacity = modes = ""
    if spec.get("volumeName"):
        modes = access_modes(status.get("accessModes"))
        capacity = str((status.get("capacity") or {}).get("storage") or "0")
    return [
        name(pvc),
        _phase(pvc),
        str(spec.get("volumeName") or ""),
        capacity,
        modes,
        _class_name(pvc),
        _unset(spec.get("volumeAttributesClassName")),
        age(pvc, now),
        _unset(spec.get("volumeMode")),
    ]


SERVICE_COLUMNS = [
    NAME,
    col("Type", _doc(_CORE + "ServiceSpec", "type")),
    col("Cluster-IP", _doc(_CORE + "ServiceSpec", "clusterIP")),
    col("External-IP", _doc(_CORE + "ServiceSpec", "externalIPs")),
    col("Port(s)", _doc(_CORE + "ServiceSpec", "ports")),
    AGE,
    col("Selector", _doc(_CORE + "ServiceSpec", "selector"), priority=1),
]


def _load_balancer(status: dict[str, Any]) -> list[str]:
    ingress = ((status.get("loadBalancer") or {}).get("ingress")) or []
    found = {
        str(i.get("ip") or i.get("hostname"))
        for i in ingress
        if isinstance(i, dict) and (i.get("ip") or i.get("hostname"))
    }
    return sorted(found)


def service_external_ip(svc: dict[str, Any]) -> str:
    """``getServiceExternalIP`` (wide): by type; a LoadBalancer's ingress first, then spec.externalIPs."""
    spec = _spec(svc)
    external = [str(ip) for ip in spec.get("externalIPs") or []]
    kind = spec.get("type")
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if kind == "LoadBalancer":
        both = _load_balancer(_status(svc)) + external
        return ",".join(both) if both else "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName") or "")
    return "<unknown>"


def service_ports(ports: Any) -> str:
    """``makePortString``: ``port/protocol``, ``port:nodePort/protocol`` with a node port."""
    pieces = []
    for port in ports if isinstance(ports, list) else []:
        node_port = _int(port.get("nodePort"))
        prefix = f"{_int(port.get('port'))}:{node_port}" if node_port > 0 else f"{_int(port.get('port'))}"
        pieces.append(f"{prefix}/{port.get('protocol') or ''}")
    return ",".join(pieces)


def print_service(svc: dict[str, Any], now: float) -> Row:
    spec = _spec(svc)
    cluster_ips = spec.get("clusterIPs") or []
    return [
        name(svc),
        str(spec.get("type") or ""),
        str(cluster_ips[0]) if cluster_ips else "<none>",
        service_external_ip(svc),
        service_ports(spec.get("ports")) or "<none>",
        age(svc, now),
        format_labels(spec.get("selector") or {}),
    ]


def _replica_columns(spec_def: str, status_def: str) -> list[dict[str, Any]]:
    return [
        NAME,
        col("Desired", _doc(spec_def, "replicas"), type_="integer"),
        col("Current", _doc(status_def, "replicas"), type_="integer"),
        col("Ready", _doc(status_def, "readyReplicas"), type_="integer"),
        AGE,
        col("Containers", _CONTAINERS, priority=1),
        col("Images", _IMAGES, priority=1),
        col("Selector", _doc(spec_def, "selector"), priority=1),
    ]


RC_COLUMNS = _replica_columns(_CORE + "ReplicationControllerSpec", _CORE + "ReplicationControllerStatus")
RS_COLUMNS = _replica_columns(_APPS + "ReplicaSetSpec", _APPS + "ReplicaSetStatus")


def _replicas_row(obj: dict[str, Any], now: float, selector: str) -> Row:
    spec, status = _spec(obj), _status(obj)
    names, images = _containers(spec.get("template"))
    cells: Row = [
        name(obj),
        _int(spec.get("replicas")),
        _int(status.get("replicas")),
        _int(status.get("readyReplicas")),
        age(obj, now),
        names,
        images,
        selector,
    ]
    return cells


def print_replication_controller(rc: dict[str, Any], now: float) -> Row:
    # An RC's selector is a plain label map.
    return _replicas_row(rc, now, format_labels(_spec(rc).get("selector") or {}))


def print_replica_set(rs: dict[str, Any], now: float) -> Row:
    return _replicas_row(rs, now, format_label_selector(_spec(rs).get("selector")))


STATEFUL_SET_COLUMNS = [
    NAME,
    col("Ready", "Number of the pod with ready state"),
    AGE,
    col("Containers", _CONTAINERS, priority=1),
    col("Images", _IMAGES, priority=1),
]


def print_stateful_set(sts: dict[str, Any], now: float) -> Row:
    spec = _spec(sts)
    names, images = _containers(spec.get("template"))
    ready = f"{_int(_status(sts).get('readyReplicas'))}/{_int(spec.get('replicas'))}"
    return [name(sts), ready, age(sts, now), names, images]


# ------------------------------------------------------------------ policy/v1

PDB_COLUMNS = [
    NAME,
    col("Min Available", "The minimum number of pods that must be available."),
    col("Max Unavailable", "The maximum number of pods that may be unavailable."),
    col("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time.", type_="integer"),
    AGE,
]


def print_pod_disruption_budget(pdb: dict[str, Any], now: float) -> Row:
    spec = _spec(pdb)
    low, high = spec.get("minAvailable"), spec.get("maxUnavailable")
    return [
        name(pdb),
        "N/A" if low is None else str(low),
        "N/A" if high is None else str(high),
        _int(_status(pdb).get("disruptionsAllowed")),
        age(pdb, now),
    ]


# ------------------------------------------------------------------ storage.k8s.io/v1

STORAGE_CLASS_COLUMNS = [
    NAME,
    col("Provisioner", _doc(_STORAGE + "StorageClass", "provisioner")),
    col("ReclaimPolicy", _doc(_STORAGE + "StorageClass", "reclaimPolicy")),
    col("VolumeBindingMode", _doc(_STORAGE + "StorageClass", "volumeBindingMode")),
    col("AllowVolumeExpansion", _doc(_STORAGE + "StorageClass", "allowVolumeExpansion")),
    AGE,
]
_DEFAULT_CLASS = ("storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class")


def print_storage_class(sc: dict[str, Any], now: float) -> Row:
    annotations = (sc.get("metadata") or {}).get("annotations") or {}
    default = any(annotations.get(key) == "true" for key in _DEFAULT_CLASS)
    return [
        name(sc) + (" (default)" if default else ""),
        str(sc.get("provisioner") or ""),
        str(sc.get("reclaimPolicy") or "Delete"),
        str(sc.get("volumeBindingMode") or "Immediate"),
        bool(sc.get("allowVolumeExpansion")),
        age(sc, now),
    ]


CSI_NODE_COLUMNS = [
    NAME,
    col("Drivers", "Drivers indicates the number of CSI drivers registered on the node", type_="integer"),
    AGE,
]


def print_csi_node(node: dict[str, Any], now: float) -> Row:
    drivers = _spec(node).get("drivers")
    return [name(node), len(drivers) if isinstance(drivers, list) else 0, age(node, now)]


CSI_DRIVER_COLUMNS = [
    NAME,
    col("AttachRequired", _doc(_STORAGE + "CSIDriverSpec", "attachRequired"), type_="boolean"),
    col("PodInfoOnMount", _doc(_STORAGE + "CSIDriverSpec", "podInfoOnMount"), type_="boolean"),
    col("StorageCapacity", _doc(_STORAGE + "CSIDriverSpec", "storageCapacity"), type_="boolean"),
    col("TokenRequests", _doc(_STORAGE + "CSIDriverSpec", "tokenRequests")),
    col("RequiresRepublish", _doc(_STORAGE + "CSIDriverSpec", "requiresRepublish"), type_="boolean"),
    col("Modes", _doc(_STORAGE + "CSIDriverSpec", "volumeLifecycleModes")),
    AGE,
]


def print_csi_driver(driver: dict[str, Any], now: float) -> Row:
    spec = _spec(driver)
    tokens = spec.get("tokenRequests")
    audiences = "<unset>" if tokens is None else ",".join(str(t.get("audience") or "") for t in tokens)
    modes = ",".join(str(m) for m in spec.get("volumeLifecycleModes") or []) or "<none>"
    attach = spec.get("attachRequired")
    return [
        name(driver),
        True if attach is None else bool(attach),
        bool(spec.get("podInfoOnMount")),
        bool(spec.get("storageCapacity")),
        audiences,
        bool(spec.get("requiresRepublish")),
        modes,
        age(driver, now),
    ]


CSI_STORAGE_CAPACITY_COLUMNS = [
    NAME,
    col("StorageClassName", _doc(_STORAGE + "CSIStorageCapacity", "storageClassName")),
    col("Capacity", _doc(_STORAGE + "CSIStorageCapacity", "capacity")),
]


def print_csi_storage_capacity(capacity: dict[str, Any], now: float) -> Row:
    value: Cell = capacity.get("capacity")
    return [name(capacity), str(capacity.get("storageClassName") or ""), "<unset>" if value is None else str(value)]


STORED_PRINTERS: dict[tuple[str, str], tuple[list[dict[str, Any]], Printer]] = {
    ("", "persistentvolumes"): (PV_COLUMNS, print_persistent_volume),
    ("", "persistentvolumeclaims"): (PVC_COLUMNS, print_persistent_volume_claim),
    ("", "services"): (SERVICE_COLUMNS, print_service),
    ("", "replicationcontrollers"): (RC_COLUMNS, print_replication_controller),
    ("apps", "replicasets"): (RS_COLUMNS, print_replica_set),
    ("apps", "statefulsets"): (STATEFUL_SET_COLUMNS, print_stateful_set),
    ("policy", "poddisruptionbudgets"): (PDB_COLUMNS, print_pod_disruption_budget),
    ("storage.k8s.io", "storageclasses"): (STORAGE_CLASS_COLUMNS, print_storage_class),
    ("storage.k8s.io", "csinodes"): (CSI_NODE_COLUMNS, print_csi_node),
    ("storage.k8s.io", "csidrivers"): (CSI_DRIVER_COLUMNS, print_csi_driver),
    ("storage.k8s.io", "csistoragecapacities"): (CSI_STORAGE_CAPACITY_COLUMNS, print_csi_storage_capacity),
}
