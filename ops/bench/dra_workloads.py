"""Kubernetes 1.37's DRA workloads for ``ops/bench/scheduler.py``, from scheduler_perf's configs.

The benchmark's base workloads (claim-template, steady-*) use the 1.31 test
driver objects; these use the objects of 1.37's
``test/integration/scheduler_perf/dra`` configs and templates, written in the
``resource.k8s.io/v1`` form those templates use and converted once to the storage form the log holds (the
benchmark writes as a component does, without the REST edge). Each is the steady-state
``empty_500nodes`` case of its test case (10 pods kept pending for
``--duration`` seconds on 500 nodes, no claims allocated before), which is
what the CI job labelled ``performance`` runs; ``--nodes`` gives the
``empty_<n>nodes`` case of another size (upstream also has 100 and 1000):

- ``selector`` — SchedulingWithResourceClaimTemplate/selector_empty_500nodes:
  the basic slices, one request with a CEL selector that every device matches
  (threshold 64 pods/s);
- ``match`` — SchedulingWithResourceClaimTemplate/match_empty_500nodes: five
  requests with ``matchAttribute: resource.kubernetes.io/pciRoot`` over
  devices on two alternating PCI roots, so a pod takes half a node
  (threshold 64 pods/s);
- ``partitionable`` — Partitionable/empty_500nodes: a counter set slice and a
  device slice per node, two devices that each consume half the counters, a
  claim for two devices;
- ``partitionable-backtracking`` — PartitionableBacktracking/empty_500nodes:
  eight devices that consume 20 Gi or 10 Gi of a 70 Gi counter, a claim for
  seven, which fits only without the first device (the allocator backtracks);
- ``consumable-capacity`` — ConsumableCapacity/empty_500nodes: four shared
  devices (``allowMultipleAllocations``) of 10 G bandwidth with a
  ``requestPolicy``, a claim for two of them at 2500 M each with a
  ``distinctAttribute`` constraint. The class selects by driver only: the CEL
  environment has no ``device.allowMultipleAllocations`` yet.

Only selector and match carry a ``threshold:`` in 1.37.2's yaml; for the
others the benchmark says that there is none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from services.api.machinery.conversion import to_storage

DRIVER = "test-driver.cdi.k8s.io"
CLASS = "test-class"
TEMPLATE = "test-claim-template"
V1 = "resource.k8s.io/v1"

SELECTOR_CEL = (
    f'device.attributes["{DRIVER}"].driverVersion.major() >= 1 && '
    f'device.capacity["{DRIVER}"].memory.isGreaterThan(quantity("1Mi"))'
)

Object = dict[str, Any]


def stored(obj: Object) -> Object:
    """A v1 object in the storage (hub) form that components write to the log."""
    group, version = obj["apiVersion"].split("/")
    return to_storage(obj, group=group, kind=obj["kind"], version=version)


@dataclass(frozen=True)
class DraObjects:
    """What a 1.37 workload creates instead of the base workloads' slice, class and claim template."""

    case: str  # scheduler_perf's test case
    prefix: str  # its workloads' name before ``empty_<n>nodes``
    threshold: float | None  # kube-scheduler's CI threshold (pods/s) at 500 nodes; None: the yaml sets none
    slices: Callable[[int, str], list[Object]]  # (node index, node name) -> that node's slices, v1
    device_class: Object  # v1
    claim_spec: Object  # the template's claim spec, v1

    def upstream(self, nodes: int) -> str:
        """scheduler_perf's name of the workload at this size (its CI runs 500 nodes)."""
        return f"{self.case}/{self.prefix}empty_{nodes}nodes"

    def stored_slices(self, index: int, node_name: str) -> list[Object]:
        return [stored(s) for s in self.slices(index, node_name)]

    def stored_class(self) -> Object:
        return stored(self.device_class)

    def stored_template(self, ns: str) -> Object:
        return stored(claim_template(ns, self.claim_spec))

    def stored_claim_form(self) -> Object:
        """A generated claim's ``apiVersion`` and ``spec`` in the log's form (converted once, shared by every claim)."""
        template = self.stored_template("test")
        return {"apiVersion": template["apiVersion"], "spec": template["spec"]["spec"]}


# -- objects -------------------------------------------------------------------------------------


def _slice(node_name: str, *, name: str, slice_count: int = 1, **spec: Any) -> Object:
    return {
        "apiVersion": V1,
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": slice_count},
            **spec,
        },
    }


def basic_slices(_: int, node_name: str, *, devices: int = 10, pci_roots: int = 2) -> list[Object]:
    """templates/resourceslice-basic-devices.yaml: an Intel GPU's attributes, PCI roots cycling."""
    return [
        _slice(
            node_name,
            name=f"{node_name}-basic",
            devices=[
                {
                    "name": f"basic-device-{i}",
                    "attributes": {
                        "driver": {"string": "xe"},
                        "driverVersion": {"version": "1.2.3"},
                        "resource.k8s.io/pciRoot": {"string": str(i % pci_roots)},
                        "family": {"string": "Arc Pro B-Series"},
                        "health": {"string": "Healthy"},
                        "model": {"string": "B60"},
                        "pciAddress": {"string": f"0000:0{i}:00.0"},
                        "pciId": {"string": "0xe211"},
                        "pciRoot": {"string": f"0{i % pci_roots}"},
                        "resource.kubernetes.io/pciBusID": {"string": f"0000:0{i}:00.0"},
                        "resource.kubernetes.io/pciRoot": {"string": f"pci0000:0{i % pci_roots}"},
                        "sriov": {"bool": True},
                        "type": {"string": "gpu"},
                    },
                    "capacity": {"memory": {"value": "24480Mi"}, "millicores": {"value": "1k"}},
                }
                for i in range(devices)
            ],
        )
    ]


def _counters(values: Mapping[str, str]) -> dict[str, Any]:
    return {name: {"value": value} for name, value in values.items()}


def partitionable_slices(_: int, node_name: str) -> list[Object]:
    """templates/resourceslice-partitionable-{countersets,devices}.yaml: two halves of four counters."""
    counters = _slice(
        node_name,
        name=f"{node_name}-countersets",
        slice_count=2,
        sharedCounters=[{"name": "counter-set", "counters": _counters({f"counter{i}": "1" for i in range(1, 5)})}],
    )
    devices = _slice(
        node_name,
        name=f"{node_name}-devices",
        slice_count=2,
        devices=[
            {
                "name": f"device-{d}",
                "consumesCounters": [
                    {
                        "counterSet": "counter-set",
                        "counters": _counters({f"counter{2 * d - 1}": "1", f"counter{2 * d}": "1"}),
                    }
                ],
            }
            for d in (1, 2)
        ],
    )
    return [counters, devices]


def backtracking_slices(_: int, node_name: str) -> list[Object]:
    """templates/resourceslice-partitionable-backtracking-*.yaml: eight cpus, 70 Gi; device-1 takes 20 Gi."""
    counters = _slice(
        node_name,
        name=f"{node_name}-countersets",
        slice_count=2,
        sharedCounters=[
            {"name": "counter-set-for-cpu", "counters": _counters({f"cpu{i}": "1" for i in range(1, 9)})},
            {"name": "counter-set-for-mem", "counters": _counters({"mem": "70Gi"})},
        ],
    )
    devices = _slice(
        node_name,
        name=f"{node_name}-devices",
        slice_count=2,
        devices=[
            {
                "name": f"device-{d}",
                "consumesCounters": [
                    {"counterSet": "counter-set-for-cpu", "counters": _counters({f"cpu{d}": "1"})},
                    {"counterSet": "counter-set-for-mem", "counters": _counters({"mem": "20Gi" if d == 1 else "10Gi"})},
                ],
            }
            for d in range(1, 9)
        ],
    )
    return [counters, devices]


def consumable_capacity_slices(_: int, node_name: str) -> list[Object]:
    """templates/resourceslice-consumablecapacity.yaml: four shared devices (device 2 has 10Gi, the others 10G)."""
    policy = {"default": "1M", "validRange": {"min": "1M", "step": "8"}}
    return [
        _slice(
            node_name,
            name=f"{node_name}-shareable",
            devices=[
                {
                    "name": f"shareable-device-{i}",
                    "allowMultipleAllocations": True,
                    "attributes": {"dra.example.com/index": {"int": i}},
                    "capacity": {"bandwidth": {"requestPolicy": policy, "value": "10Gi" if i == 2 else "10G"}},
                }
                for i in range(4)
            ],
        )
    ]


def device_class(expression: str = f'device.driver == "{DRIVER}"') -> Object:
    return {
        "apiVersion": V1,
        "kind": "DeviceClass",
        "metadata": {"name": CLASS},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


def claim_spec(
    *,
    requests: int = 1,
    count: int | None = None,
    selectors: list[Object] | None = None,
    capacity: Mapping[str, str] | None = None,
    constraints: list[Object] | None = None,
) -> Object:
    """templates/resourceclaimtemplate*.yaml: ``req-<i>`` of ``test-class``, v1's ``exactly`` form."""
    exactly: Object = {"deviceClassName": CLASS}
    if count is not None:
        exactly["count"] = count
    if selectors:
        exactly["selectors"] = selectors
    if capacity:
        exactly["capacity"] = {"requests": dict(capacity)}
    spec: Object = {"requests": [{"name": f"req-{i}", "exactly": dict(exactly)} for i in range(requests)]}
    if constraints:
        spec["constraints"] = constraints
    return {"devices": spec}


def claim_template(ns: str, spec: Object) -> Object:
    return {
        "apiVersion": V1,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": TEMPLATE, "namespace": ns},
        "spec": {"spec": spec},
    }


# -- the workloads ---------------------------------------------------------------------------------

DRA_1_37: dict[str, DraObjects] = {
    "selector": DraObjects(
        case="SchedulingWithResourceClaimTemplate",
        prefix="selector_",
        threshold=64,
        slices=basic_slices,
        device_class=device_class(),
        claim_spec=claim_spec(selectors=[{"cel": {"expression": SELECTOR_CEL}}]),
    ),
    "match": DraObjects(
        case="SchedulingWithResourceClaimTemplate",
        prefix="match_",
        threshold=64,
        slices=basic_slices,
        device_class=device_class(),
        claim_spec=claim_spec(requests=5, constraints=[{"matchAttribute": "resource.kubernetes.io/pciRoot"}]),
    ),
    "partitionable": DraObjects(
        case="Partitionable",
        prefix="",
        threshold=None,
        slices=partitionable_slices,
        device_class=device_class(),
        claim_spec=claim_spec(count=2),
    ),
    "partitionable-backtracking": DraObjects(
        case="PartitionableBacktracking",
        prefix="",
        threshold=None,
        slices=backtracking_slices,
        device_class=device_class(),
        claim_spec=claim_spec(count=7),
    ),
    "consumable-capacity": DraObjects(
        case="ConsumableCapacity",
        prefix="",
        threshold=None,
        slices=consumable_capacity_slices,
        # Upstream's class also says `device.allowMultipleAllocations == true`; draplane's CEL environment does not
        # declare that field yet (1.34+ with DRAConsumableCapacity). Every device of these slices allows multiple
        # allocations, so the driver alone selects the same devices.
        device_class=device_class(),
        claim_spec=claim_spec(
            count=2,
            capacity={"bandwidth": "2500M"},
            constraints=[{"requests": ["req-0"], "distinctAttribute": "dra.example.com/index"}],
        ),
    ),
}


def threshold_text(objects: DraObjects, nodes: int) -> str:
    """The report's line beside pods/s: kube-scheduler's CI threshold for the workload, or that it has none."""
    ci = objects.upstream(500)
    if objects.threshold is None:
        return f"none in 1.37.2's yaml for {ci}"
    return f"{objects.threshold:g} pods/s ({ci}{'' if nodes == 500 else f'; this run: {nodes} nodes'})"


def devices_per_node(objects: DraObjects) -> int:
    return sum(len(s["spec"].get("devices") or ()) for s in objects.slices(0, "node"))
