"""Device taints get a ``timeAdded`` from the server, as kube-apiserver 1.37 stamps it.

SetDefaults_DeviceTaint stamps a taint written without one (ResourceSlice
devices, DeviceTaintRules), and the DeviceTaintRule strategy's
PrepareForUpdate stamps a new effect that kept the old time, so that
tolerationSeconds count from when the effect began.

Where the expectations come from: Kubernetes 1.37.2's
pkg/apis/resource/v1/defaults.go and pkg/registry/resource/devicetaintrule/strategy.go,
then checked on 2026-12-04 against kube-apiserver 1.37.2 built from the Go module
proxy (`ops/upstream apiserver --version 1.37.2`, kubectl create/label/replace):
a rule created without a time got the write's; a label kept it (generation 1); a
new effect with the old time got the write's time (generation 2); a new effect with
a time of the client's kept that time (generation 3); a slice's untimed device taint
got the write's time, a timed one kept its own, a device without taints stayed so.
"""

from __future__ import annotations

import copy
import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from services.api.admission.defaults import default_device_taint_times
from services.api.types.registry import RESOURCE_GROUP, by_resource
from services.runtime.committer_core import CommitterCore
from tests.support.committing import commit_batch as commit
from topics.envelope import Request, UserInfo

USER = UserInfo("admin", ("system:masters",))
T0 = datetime(2026, 12, 4, 9, 0, 0, 700_000, tzinfo=UTC)
T0_TEXT = "2026-12-04T09:00:00Z"  # whole seconds, as Go's Truncate(time.Second)
_ids = itertools.count()


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def core_with(clock: Clock) -> CommitterCore:
    uids = (f"uid-{i}" for i in itertools.count())
    return CommitterCore(clock=clock, new_uid=lambda: next(uids))


def req(op: str, resource: str, name: str, obj: dict[str, Any]) -> Request:
    return Request(
        id=f"r{next(_ids)}",
        op=op,  # type: ignore[arg-type]
        group=RESOURCE_GROUP,
        version="v1",
        resource=resource,
        namespace="",
        name=name,
        user=USER,
        reply_to="test",
        object=obj,
    )


def rule(**taint: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "maintenance"},
        "spec": {"deviceSelector": {"driver": "gpu.example.com"}, "taint": {"key": "k", **taint}},
    }


def test_a_rule_written_without_a_time_gets_the_servers() -> None:
    core = core_with(Clock())
    (o,) = commit(core, req("create", "devicetaintrules", "maintenance", rule(effect="NoSchedule")))
    assert o.code == 201 and o.object is not None
    assert o.object["spec"]["taint"]["timeAdded"] == T0_TEXT


def test_a_time_the_client_gave_is_kept() -> None:
    core = core_with(Clock())
    given = rule(effect="NoSchedule", timeAdded="2026-01-01T00:00:00Z")
    (o,) = commit(core, req("create", "devicetaintrules", "maintenance", given))
    assert o.object is not None and o.object["spec"]["taint"]["timeAdded"] == "2026-01-01T00:00:00Z"


def test_a_new_effect_that_kept_the_old_time_is_stamped_now() -> None:
    clock = Clock()
    core = core_with(clock)
    (o,) = commit(core, req("create", "devicetaintrules", "maintenance", rule(effect="NoSchedule")))
    assert o.object is not None
    clock.now = T0 + timedelta(minutes=5)
    evicting = copy.deepcopy(o.object)
    evicting["spec"]["taint"]["effect"] = "NoExecute"  # timeAdded as read
    (o,) = commit(core, req("update", "devicetaintrules", "maintenance", evicting))
    assert o.code == 200 and o.object is not None
    assert o.object["spec"]["taint"] == {"key": "k", "effect": "NoExecute", "timeAdded": "2026-12-04T09:05:00Z"}
    # The same effect, or a new effect with a time of the client's own, keeps what was written.
    clock.now = T0 + timedelta(minutes=10)
    relabelled = copy.deepcopy(o.object)
    relabelled["metadata"]["labels"] = {"a": "b"}
    (o,) = commit(core, req("update", "devicetaintrules", "maintenance", relabelled))
    assert o.object is not None and o.object["spec"]["taint"]["timeAdded"] == "2026-12-04T09:05:00Z"
    back = copy.deepcopy(o.object)
    back["spec"]["taint"].update(effect="NoSchedule", timeAdded="2026-12-01T00:00:00Z")
    (o,) = commit(core, req("update", "devicetaintrules", "maintenance", back))
    assert o.object is not None and o.object["spec"]["taint"]["timeAdded"] == "2026-12-01T00:00:00Z"


def test_slice_device_taints_without_a_time_get_one() -> None:
    core = core_with(Clock())
    slice_ = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "node-1-gpu"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {"name": "gpu-0", "taints": [{"key": "a", "effect": "NoSchedule"}]},
                {"name": "gpu-1", "taints": [{"key": "b", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"}]},
                {"name": "gpu-2"},
            ],
        },
    }
    (o,) = commit(core, req("create", "resourceslices", "node-1-gpu", slice_))
    assert o.code == 201 and o.object is not None
    taints = [d.get("basic", {}).get("taints") for d in o.object["spec"]["devices"]]
    assert taints == [
        [{"key": "a", "effect": "NoSchedule", "timeAdded": T0_TEXT}],
        [{"key": "b", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"}],
        None,
    ]


def test_defaulting_replaces_the_containers_it_changes_and_leaves_shared_ones_alone() -> None:
    rt = by_resource(RESOURCE_GROUP, "resourceslices")
    assert rt is not None
    shared_taint = {"key": "a", "effect": "NoSchedule"}
    shared_device: dict[str, Any] = {"name": "gpu-0", "basic": {"taints": [shared_taint]}}
    untouched: dict[str, Any] = {"name": "gpu-1", "basic": {}}
    obj: dict[str, Any] = {"spec": {"devices": [shared_device, untouched]}}
    default_device_taint_times(rt, obj, lambda: T0_TEXT)
    assert obj["spec"]["devices"][0]["basic"]["taints"] == [{"key": "a", "effect": "NoSchedule", "timeAdded": T0_TEXT}]
    assert obj["spec"]["devices"][1] is untouched
    assert shared_taint == {"key": "a", "effect": "NoSchedule"} and shared_device["basic"] == {"taints": [shared_taint]}
    other = by_resource(RESOURCE_GROUP, "resourceclaims")
    assert other is not None
    claim = {"spec": {"taint": {"key": "x"}}}
    default_device_taint_times(other, claim, lambda: T0_TEXT)
    assert claim == {"spec": {"taint": {"key": "x"}}}  # only slices and rules have device taints


def test_the_clock_is_read_only_for_a_taint_that_needs_a_time() -> None:
    """Every write of every kind passes through the defaulting: the others must not pay for a time."""
    slices = by_resource(RESOURCE_GROUP, "resourceslices")
    claims = by_resource(RESOURCE_GROUP, "resourceclaims")
    assert slices is not None and claims is not None

    def clock() -> str:
        raise AssertionError("the clock was read")

    timed = {"key": "a", "effect": "NoSchedule", "timeAdded": T0_TEXT}
    default_device_taint_times(slices, {"spec": {"devices": [{"name": "d", "basic": {"taints": [timed]}}]}}, clock)
    default_device_taint_times(claims, {"spec": {"devices": {"requests": []}}}, clock)
    reads: list[str] = []

    def counted() -> str:
        reads.append(T0_TEXT)
        return T0_TEXT

    untimed = {"spec": {"devices": [{"name": "d", "basic": {"taints": [{"key": "a"}]}} for _ in range(3)]}}
    default_device_taint_times(slices, untimed, counted)
    assert len(reads) == 1  # one time for the whole write
