"""The three drifts issue 18 found between copies of one Kubernetes rule, each seen through its consumer.

Each test failed on main before ``services.kube`` (checked by running this
file against 81aa4d8's tree, where the same consumers lived at
``services.api.cel``, ``services.api.validation.resource_slice`` and
``services.chaos.invariants``; the other imports are unchanged).

- "1.5n": the scheduler kept 3/2·10⁻⁹ where ParseQuantity (and CEL) round up
  to 2·10⁻⁹.
- " 1Gi": a device capacity that the decoder and validation accept (Go's
  UnmarshalJSON trims spaces) failed in CEL, whose parser took no space; and
  validation trimmed with ``str.strip``, which also removes U+001C..U+001F,
  so it accepted what Go refuses.
- "1_0": the scheduler and the chaos check parsed Gt/Lt with ``int()``, so a
  label "1_0" satisfied ``Gt 5``; Go's ``strconv.ParseInt`` refuses it.
- ``can_be_reserved``: the controller's ignored the reservedFor limit the
  scheduler's checked, so the controller tried to add a 33rd consumer.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ops.chaoskit.invariants import node_selector_matches
from services.api.admission.validation.resource_slice import validate_capacity
from services.controllers.pod_claims import needs_reservation
from services.kube.cel import compile, device_view, evaluate
from services.scheduler.plugins.node_affinity import RequiredNodeAffinity
from services.scheduler.resources import pod_requests

Obj = dict[str, Any]


def test_sub_nano_requests_round_up_in_the_scheduler_as_in_parse_quantity() -> None:
    pod = {"spec": {"containers": [{"name": "a", "resources": {"requests": {"example.com/x": "1.5n"}}}]}}
    assert pod_requests(pod)["example.com/x"] == Fraction(2, 10**9)
    compiled = compile('quantity("1.5n") == quantity("2n")')
    assert evaluate(compiled, device_view(driver="")) is True


def test_a_spaced_capacity_is_one_quantity_for_validation_and_cel() -> None:
    assert validate_capacity(" 1Gi", "capacity[mem]") == []
    view = device_view(driver="d.example.com", capacity={"mem": " 1Gi"})
    compiled = compile('device.capacity["d.example.com"].mem == quantity("1Gi")')
    assert compiled.error is None
    assert evaluate(compiled, view) is True


def test_validation_trims_only_what_go_trims() -> None:
    assert validate_capacity("\x1f1Gi", "capacity[mem]") != []


def _node_selector_gt(value: str) -> Obj:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": "n", "operator": "Gt", "values": [value]}]}]}


def test_a_label_1_0_is_no_number_for_gt() -> None:
    node = {"metadata": {"name": "node-1", "labels": {"n": "1_0"}}}
    pod = {
        "spec": {
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": _node_selector_gt("5")}}
        }
    }
    assert RequiredNodeAffinity.of_pod(pod).matches(node) is False
    assert node_selector_matches(_node_selector_gt("5"), node) is False
    # Still a number where Go's ParseInt says so.
    signed = {"metadata": {"name": "node-1", "labels": {"n": "+10"}}}
    assert RequiredNodeAffinity.of_pod(pod).matches(signed) is True


def test_the_controller_does_not_reserve_beyond_the_limit() -> None:
    pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "new"}}
    consumers = [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(32)]
    claim = {"metadata": {"name": "c", "namespace": "ns"}, "status": {"allocation": {}, "reservedFor": consumers}}
    assert needs_reservation(pod, claim) is False
    claim["status"]["reservedFor"] = consumers[:31]
    assert needs_reservation(pod, claim) is True
    claim["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert needs_reservation(pod, claim) is False  # the controller's own check, kept at its call site
