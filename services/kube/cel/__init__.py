"""The Kubernetes DRA CEL environment (``resource.k8s.io/v1alpha3`` selectors).

Public entry points:

* `compile_check` — for API validation: None, or the error detail Kubernetes
  reports for ``...selectors[j].cel.expression``;
* `compile` — a cached `CompiledSelector`;
* `estimate_cost` — Kubernetes' static worst-case cost of a selector (`cost`);
* `device_view` / `evaluate` — run a compiled selector against one device.
"""

from services.kube.cel.compiler import CompiledSelector, compile, compile_check
from services.kube.cel.cost import estimate_cost
from services.kube.cel.evaluation import CelRuntimeError, DeviceView, device_view, evaluate

__all__ = [
    "CelRuntimeError",
    "CompiledSelector",
    "DeviceView",
    "compile",
    "compile_check",
    "device_view",
    "estimate_cost",
    "evaluate",
]
