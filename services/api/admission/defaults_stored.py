"""Kubernetes' defaulting for the kinds draplane only stores (Kubernetes 1.31).

Why this module exists: upstream kube-scheduler and kube-controller-manager
read PersistentVolumes, PersistentVolumeClaims, Services, ReplicationControllers,
ReplicaSets, StatefulSets, StorageClasses and CSIDrivers
(docs/decisions/upstream-kinds.md), and both they and ``kubectl get`` expect
the fields kube-apiserver defaults. `apply_stored_defaults` sets the cheap ones
of pkg/apis/{core,apps,storage}/v1/defaults.go on the wire dict, in place:

- PersistentVolume: ``persistentVolumeReclaimPolicy: Retain``,
  ``volumeMode: Filesystem``, ``status.phase: Pending``;
- PersistentVolumeClaim: ``volumeMode: Filesystem``, ``status.phase: Pending``;
- Service: ``type: ClusterIP``, ``sessionAffinity: None``, each port's
  ``protocol: TCP`` and ``targetPort`` (the port), ``internalTrafficPolicy:
  Cluster`` for ClusterIP/NodePort/LoadBalancer;
- ReplicationController: ``replicas: 1``, selector and labels from the
  template's labels; ReplicaSet: ``replicas: 1``; StatefulSet: ``replicas: 1``,
  ``podManagementPolicy: OrderedReady``, ``updateStrategy`` RollingUpdate with
  partition 0, ``revisionHistoryLimit: 10``,
  ``persistentVolumeClaimRetentionPolicy`` Retain/Retain; each pod template's
  spec as a pod's (`services.api.admission.defaults.pod_spec_defaults`);
- StorageClass: ``reclaimPolicy: Delete``, ``volumeBindingMode: Immediate``;
- CSIDriver: ``attachRequired: true``, ``podInfoOnMount: false``,
  ``storageCapacity: false``, ``fsGroupPolicy: ReadWriteOnceWithFSType``,
  ``requiresRepublish: false``, ``volumeLifecycleModes: [Persistent]``.

Not reproduced: a Service's cluster IP and node-port allocation, and
``ipFamilies``/``ipFamilyPolicy`` (draplane runs no Service networking; the
addresses a client sends are stored as sent).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from services.api.admission.defaults import pod_spec_defaults
from services.api.types.registry import APPS_GROUP, CORE, STORAGE_GROUP, ResourceType

Obj = dict[str, Any]

__all__ = ["apply_stored_defaults"]


def apply_stored_defaults(rt: ResourceType, obj: Obj) -> None:
    """Set Kubernetes' defaults on ``obj`` (a wire dict of a stored-only kind), in place; other kinds untouched."""
    defaulter = _DEFAULTERS.get((rt.group, rt.kind))
    if defaulter is not None:
        defaulter(obj)


def _child(obj: Obj, key: str) -> Obj:
    value = obj.get(key)
    if not isinstance(value, dict):
        value = obj[key] = {}
    return value


def _default(obj: Obj, key: str, value: Any) -> None:
    """Go's zero-value check: unset and empty alike."""
    if obj.get(key) in (None, ""):
        obj[key] = value


def _template(spec: Obj) -> Obj | None:
    template = spec.get("template")
    if not isinstance(template, dict):
        return None
    pod_spec_defaults(_child(template, "spec"))
    return template


def _persistent_volume(pv: Obj) -> None:
    spec = _child(pv, "spec")
    _default(spec, "persistentVolumeReclaimPolicy", "Retain")
    _default(spec, "volumeMode", "Filesystem")
    _default(_child(pv, "status"), "phase", "Pending")


def _persistent_volume_claim(pvc: Obj) -> None:
    _default(_child(pvc, "spec"), "volumeMode", "Filesystem")
    _default(_child(pvc, "status"), "phase", "Pending")


def _service(svc: Obj) -> None:
    spec = _child(svc, "spec")
    _default(spec, "type", "ClusterIP")
    _default(spec, "sessionAffinity", "None")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            _default(port, "protocol", "TCP")
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port.get("port")
    if spec["type"] in ("ClusterIP", "NodePort", "LoadBalancer"):
        _default(spec, "internalTrafficPolicy", "Cluster")


def _replication_controller(rc: Obj) -> None:
    spec = _child(rc, "spec")
    template = _template(spec)
    labels = (template or {}).get("metadata", {}).get("labels") if template else None
    if isinstance(labels, dict) and labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = _child(rc, "metadata")
        if not meta.get("labels"):
            meta["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1


def _replica_set(rs: Obj) -> None:
    spec = _child(rs, "spec")
    _template(spec)
    if spec.get("replicas") is None:
        spec["replicas"] = 1


def _stateful_set(sts: Obj) -> None:
    spec = _child(sts, "spec")
    _template(spec)
    _default(spec, "podManagementPolicy", "OrderedReady")
    strategy = _child(spec, "updateStrategy")
    _default(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _child(strategy, "rollingUpdate")
        if rolling.get("partition") is None:
            rolling["partition"] = 0
    retention = _child(spec, "persistentVolumeClaimRetentionPolicy")
    _default(retention, "whenDeleted", "Retain")
    _default(retention, "whenScaled", "Retain")
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10


def _storage_class(sc: Obj) -> None:
    _default(sc, "reclaimPolicy", "Delete")
    _default(sc, "volumeBindingMode", "Immediate")


def _csi_driver(driver: Obj) -> None:
    spec = _child(driver, "spec")
    for key, value in (
        ("attachRequired", True),
        ("podInfoOnMount", False),
        ("storageCapacity", False),
        ("fsGroupPolicy", "ReadWriteOnceWithFSType"),
        ("requiresRepublish", False),
    ):
        if spec.get(key) is None:
            spec[key] = value
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]


_DEFAULTERS: dict[tuple[str, str], Callable[[Obj], None]] = {
    (CORE, "PersistentVolume"): _persistent_volume,
    (CORE, "PersistentVolumeClaim"): _persistent_volume_claim,
    (CORE, "Service"): _service,
    (CORE, "ReplicationController"): _replication_controller,
    (APPS_GROUP, "ReplicaSet"): _replica_set,
    (APPS_GROUP, "StatefulSet"): _stateful_set,
    (STORAGE_GROUP, "StorageClass"): _storage_class,
    (STORAGE_GROUP, "CSIDriver"): _csi_driver,
}
