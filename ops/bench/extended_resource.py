"""The objects of scheduler_perf's ExtendedResource workload (Kubernetes 1.37), for ``ops/bench/scheduler.py``.

test/integration/scheduler_perf/dra/extendedresource/performance-config.yaml,
``Explicit_25classes_5000pods_500nodes``: 25 DeviceClasses ``test-class-<i>``
that all select the test driver's devices and name ``example.com/gpu-<i>`` in
``spec.extendedResourceName``; pod ``<n>`` asks for one ``example.com/gpu-<n mod
25>`` (requests = limits) and no claim: the scheduler creates one per pod.
Its CI threshold (``ci-benchmark-scheduler-perf``) is 120 pods/s.
"""

from __future__ import annotations

from typing import Any

DRIVER = "test-driver.cdi.k8s.io"
EXPLICIT = "example.com/gpu"
CLASSES = 25
CI_THRESHOLD = 120.0  # pods/s, Explicit_25classes_5000pods_500nodes
TITLE = "ExtendedResource/Explicit_25classes"


def device_classes(count: int = CLASSES) -> list[dict[str, Any]]:
    """deviceclass-extended-resource.yaml with class ``example.com/gpu``: explicit names."""
    return [
        {
            "apiVersion": "resource.k8s.io/v1beta2",
            "kind": "DeviceClass",
            "metadata": {"name": f"test-class-{i}"},
            "spec": {
                "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
                "extendedResourceName": f"{EXPLICIT}-{i}",
            },
        }
        for i in range(count)
    ]


def pod(ns: str, name: str, *, index: int, classes: int = CLASSES) -> dict[str, Any]:
    """pod-with-extended-resource.yaml: one device of class ``index mod classes``."""
    wanted = {f"{EXPLICIT}-{index % classes}": "1"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.9",
                    "resources": {"requests": wanted, "limits": wanted},
                }
            ]
        },
    }


def index_of(name: str) -> int:
    """The pod's index in the bench's names (``test-00042`` → 42)."""
    return int(name.rsplit("-", 1)[1])
