"""Kubernetes' defaulting for the kinds draplane serves (Kubernetes 1.31).

Why this module exists: clients rely on defaulted fields (a pod's
``schedulerName``, a request's ``allocationMode``/``count``), and draplane's
components read them. `apply_defaults` reproduces the SetObjectDefaults_*
functions kube-apiserver runs when it decodes a body
(pkg/apis/core/v1/defaults.go, pkg/apis/resource/v1alpha3/defaults.go and
their generated ``+default`` markers), on the wire dict, in place:

- ResourceClaim / ResourceClaimTemplate: each device request's
  ``allocationMode`` defaults to ``ExactCount``, and an ExactCount request's
  ``count`` to 1;
- Pod: requests default to limits (containers and init containers),
  ``enableServiceLinks: true``, host ports for host-network pods, then the pod
  spec (``dnsPolicy: ClusterFirst``, ``restartPolicy: Always``,
  ``securityContext: {}``, ``terminationGracePeriodSeconds: 30``,
  ``schedulerName: default-scheduler``), volumes (an empty source becomes
  ``emptyDir: {}``, file modes 0644, ...), and every container (image pull
  policy from the tag, termination message path/policy, port protocol TCP,
  probe timings, HTTP probe path/scheme, downward-API field ref apiVersion);
- Namespace: the ``kubernetes.io/metadata.name`` label and ``status.phase: Active``;
- Node: ``status.allocatable`` defaults to ``status.capacity``.

Not reproduced: rounding quantities up to milli precision
(SetDefaults_ResourceList) — quantities are stored exactly as sent — and
defaults guarded by gates draplane does not model (InPlacePodVerticalScaling's
resize policies, ImageVolume's pull policy). What kube's registry strategies
do on create (a new pod's ``status.phase: Pending``, a namespace's
``kubernetes`` finalizer) is not defaulting and belongs to admission.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from services.api.types.registry import CORE, RESOURCE_GROUP, ResourceType

__all__ = ["apply_defaults", "default_device_taint_times", "image_tag", "pod_spec_defaults"]

Obj = dict[str, Any]

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30
TERMINATION_MESSAGE_PATH = "/dev/termination-log"
VOLUME_FILE_MODE = 0o644  # Secret, ConfigMap, DownwardAPI and projected volumes
SERVICE_ACCOUNT_TOKEN_EXPIRATION_SECONDS = 3600
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

_VOLUME_SOURCES = (
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
)


def apply_defaults(rt: ResourceType, obj: Obj) -> None:
    """Set Kubernetes' defaults on ``obj`` (a wire dict of ``rt`` in its storage version), in place."""
    if rt.group == RESOURCE_GROUP:
        if rt.kind == "ResourceClaim":
            _claim_spec(_get(obj, "spec"))
        elif rt.kind == "ResourceClaimTemplate":
            _claim_spec(_get(_get(obj, "spec"), "spec"))
    elif rt.group == CORE:
        if rt.kind == "Pod":
            _pod(obj)
        elif rt.kind == "Namespace":
            _namespace(obj)
        elif rt.kind == "Node":
            _node(obj)


# --------------------------------------------------------------------------
# resource.k8s.io


def _claim_spec(spec: Any) -> None:
    for request in _list(_get(_get(spec, "devices"), "requests")):
        if not isinstance(request, dict):
            continue
        subrequests = _list(request.get("firstAvailable"))
        if subrequests:
            # A prioritized list has no device fields of its own; its subrequests get the defaults
            # (SetDefaults_DeviceSubRequest beside SetDefaults_ExactDeviceRequest).
            for sub in subrequests:
                if isinstance(sub, dict):
                    _request_defaults(sub)
            continue
        _request_defaults(request)


def _request_defaults(request: Obj) -> None:
    if not request.get("allocationMode"):
        request["allocationMode"] = "ExactCount"
    if request["allocationMode"] == "ExactCount" and not request.get("count"):
        request["count"] = 1


def default_device_taint_times(rt: ResourceType, obj: Obj, now: Callable[[], str]) -> None:
    """SetDefaults_DeviceTaint (Kubernetes 1.33+): a device taint without ``timeAdded`` gets ``now()``.

    kube-apiserver stamps it when it decodes a body, so every stored taint has
    one: on a ResourceSlice's devices (``basic.taints`` in the storage form)
    and on a DeviceTaintRule (``spec.taint``); no other kind has device
    taints. ``now`` gives metav1.Time text, whole seconds; it is called only
    when a taint needs it (this runs on every write). Only the containers on
    the way to a stamped taint are replaced, never changed in place: they may
    be shared with the stored object.
    """
    if rt.group != RESOURCE_GROUP or rt.kind not in ("DeviceTaintRule", "ResourceSlice"):
        return
    spec = _get(obj, "spec")
    if not isinstance(spec, dict):
        return
    if rt.kind == "DeviceTaintRule":
        taint = spec.get("taint")
        if isinstance(taint, dict) and taint.get("timeAdded") is None:
            obj["spec"] = {**spec, "taint": {**taint, "timeAdded": now()}}
        return
    devices = spec.get("devices")
    if not isinstance(devices, list) or not any(_untimed_taints(d) for d in devices):
        return
    stamp = now()
    obj["spec"] = {**spec, "devices": [_with_taint_times(d, stamp) if _untimed_taints(d) else d for d in devices]}


def _untimed_taints(device: Any) -> bool:
    return any(t.get("timeAdded") is None for t in _dicts(_get(_get(device, "basic"), "taints")))


def _with_taint_times(device: Obj, now: str) -> Obj:
    basic = device["basic"]
    taints = [
        {**t, "timeAdded": now} if isinstance(t, dict) and t.get("timeAdded") is None else t for t in basic["taints"]
    ]
    return {**device, "basic": {**basic, "taints": taints}}


# --------------------------------------------------------------------------
# Namespace and Node


def _namespace(ns: Obj) -> None:
    metadata = _get(ns, "metadata")
    name = _get(metadata, "name")
    if name and isinstance(metadata, dict):
        labels = metadata.get("labels")
        if not isinstance(labels, dict):
            labels = metadata["labels"] = {}
        labels[NAMESPACE_NAME_LABEL] = name
    status = _child(ns, "status")
    if not status.get("phase"):
        status["phase"] = "Active"


def _node(node: Obj) -> None:
    status = _get(node, "status")
    if isinstance(status, dict) and status.get("allocatable") is None and isinstance(status.get("capacity"), dict):
        status["allocatable"] = dict(status["capacity"])


# --------------------------------------------------------------------------
# Pod


def _pod(pod: Obj) -> None:
    spec = _get(pod, "spec")
    if not isinstance(spec, dict):
        # Defaulting a zero PodSpec still fills it in, as Go's value-typed spec would be.
        spec = pod["spec"] = {}
    # SetDefaults_Pod
    for key in ("containers", "initContainers"):
        for container in _dicts(spec.get(key)):
            _requests_from_limits(container)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork"):
        for key in ("containers", "initContainers"):
            for container in _dicts(spec.get(key)):
                for port in _dicts(container.get("ports")):
                    if not port.get("hostPort") and port.get("containerPort"):
                        port["hostPort"] = port["containerPort"]
    pod_spec_defaults(spec)


def pod_spec_defaults(spec: Obj) -> None:
    """SetDefaults_PodSpec, then volumes and containers: what a pod and a pod template share."""
    _default(spec, "dnsPolicy", "ClusterFirst")
    _default(spec, "restartPolicy", "Always")
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    _default(spec, "schedulerName", DEFAULT_SCHEDULER_NAME)
    # Volumes, then containers in Kubernetes' order.
    for volume in _dicts(spec.get("volumes")):
        _volume(volume)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in _dicts(spec.get(key)):
            _container(container)


def _requests_from_limits(container: Obj) -> None:
    resources = _get(container, "resources")
    limits = _get(resources, "limits")
    if not isinstance(limits, dict) or not limits:
        return
    requests = resources.get("requests")
    if not isinstance(requests, dict):
        requests = resources["requests"] = {}
    for name, quantity in limits.items():
        requests.setdefault(name, quantity)


def _container(container: Obj) -> None:
    if not container.get("imagePullPolicy"):
        container["imagePullPolicy"] = (
            "Always" if image_tag(container.get("image") or "") == "latest" else "IfNotPresent"
        )
    _default(container, "terminationMessagePath", TERMINATION_MESSAGE_PATH)
    _default(container, "terminationMessagePolicy", "File")
    for port in _dicts(container.get("ports")):
        _default(port, "protocol", "TCP")
    for env in _dicts(container.get("env")):
        _field_ref(_get(_get(env, "valueFrom"), "fieldRef"))
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = _get(container, key)
        if isinstance(probe, dict):
            _probe(probe)
    lifecycle = _get(container, "lifecycle")
    for key in ("postStart", "preStop"):
        _http_get(_get(_get(lifecycle, key), "httpGet"))


def _probe(probe: Obj) -> None:
    for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3)):
        if not probe.get(key):
            probe[key] = value
    _http_get(probe.get("httpGet"))
    grpc = probe.get("grpc")
    if isinstance(grpc, dict) and grpc.get("service") is None:
        grpc["service"] = ""


def _http_get(action: Any) -> None:
    if isinstance(action, dict):
        _default(action, "path", "/")
        _default(action, "scheme", "HTTP")


def _field_ref(selector: Any) -> None:
    if isinstance(selector, dict):
        _default(selector, "apiVersion", "v1")


def _volume(volume: Obj) -> None:
    if all(volume.get(source) is None for source in _VOLUME_SOURCES):
        volume["emptyDir"] = {}
    if isinstance(host_path := volume.get("hostPath"), dict) and host_path.get("type") is None:
        host_path["type"] = ""
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        if isinstance(source := volume.get(key), dict) and source.get("defaultMode") is None:
            source["defaultMode"] = VOLUME_FILE_MODE
    if isinstance(iscsi := volume.get("iscsi"), dict):
        _default(iscsi, "iscsiInterface", "default")
    if isinstance(rbd := volume.get("rbd"), dict):
        _default(rbd, "pool", "rbd")
        _default(rbd, "user", "admin")
        _default(rbd, "keyring", "/etc/ceph/keyring")
    for item in _dicts(_get(volume.get("downwardAPI"), "items")):
        _field_ref(item.get("fieldRef"))
    if isinstance(azure := volume.get("azureDisk"), dict):
        for key, value in (("cachingMode", "ReadWrite"), ("fsType", "ext4"), ("readOnly", False), ("kind", "Shared")):
            if azure.get(key) is None:
                azure[key] = value
    for projection in _dicts(_get(volume.get("projected"), "sources")):
        for item in _dicts(_get(projection.get("downwardAPI"), "items")):
            _field_ref(item.get("fieldRef"))
        token = projection.get("serviceAccountToken")
        if isinstance(token, dict) and token.get("expirationSeconds") is None:
            token["expirationSeconds"] = SERVICE_ACCOUNT_TOKEN_EXPIRATION_SECONDS
    if isinstance(scale_io := volume.get("scaleIO"), dict):
        _default(scale_io, "storageMode", "ThinProvisioned")
        _default(scale_io, "fsType", "xfs")
    claim_spec = _get(_get(volume.get("ephemeral"), "volumeClaimTemplate"), "spec")
    if isinstance(claim_spec, dict) and claim_spec.get("volumeMode") is None:
        claim_spec["volumeMode"] = "Filesystem"


# --------------------------------------------------------------------------
# Image references (github.com/distribution/reference, as kube's parsers.ParseImageName uses it)

_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REFERENCE = re.compile(
    rf"(?P<name>(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?"
)
_HEX64 = re.compile(r"[a-f0-9]{64}")


def image_tag(image: str) -> str:
    """The tag kube's ParseImageName finds: "latest" when there is neither tag nor digest, "" when unparsable."""
    if _HEX64.fullmatch(image):
        return ""
    match = _REFERENCE.fullmatch(image)
    if match is None or len(match["name"]) > 255:
        return ""
    name = match["name"]
    first, slash, rest = name.partition("/")
    is_domain = bool(slash) and (any(c in first for c in ".:") or first == "localhost" or first.lower() != first)
    path = rest if is_domain else name
    if path.lower() != path:
        return ""
    if match["tag"]:
        return str(match["tag"])
    return "" if match["digest"] else "latest"


# --------------------------------------------------------------------------
# dict helpers


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def _child(obj: Obj, key: str) -> Obj:
    value = obj.get(key)
    if not isinstance(value, dict):
        value = obj[key] = {}
    return value


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dicts(value: Any) -> list[Obj]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _default(obj: Obj, key: str, value: Any) -> None:
    """Go's ``if obj.Field == "" { obj.Field = value }`` (unset and empty alike)."""
    if not obj.get(key):
        obj[key] = value
