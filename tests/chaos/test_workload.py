"""The chaos workload's plan and manifests (pure): reproducible, and valid objects of every kind."""

from __future__ import annotations

from collections import Counter

from ops.chaoskit import workload
from services.api.admission.validation import validate_create
from services.api.types import registry


def plan(seed: int = 7, count: int = 200) -> list[workload.Item]:
    return workload.plan(count, seed=seed, run_seconds=(1.0, 4.0), lifetime=(2.0, 8.0))


def test_the_plan_is_reproducible_and_has_every_kind() -> None:
    items = plan()
    assert items == plan()
    assert items != plan(seed=8)
    assert sum(len(i.pods) for i in items) == 200
    assert set(Counter(i.kind for i in items)) == {"job", "service", "pair", "shared"}
    names = [p for i in items for p in i.pods]
    assert len(set(names)) == len(names)


def test_a_plan_never_ends_with_half_a_shared_pair() -> None:
    for seed in range(30):
        assert sum(len(i.pods) for i in workload.plan(5, seed=seed, run_seconds=(1, 2), lifetime=(1, 2))) == 5


def test_manifests_per_kind() -> None:
    items = {i.kind: i for i in plan()}
    job = workload.manifests(items["job"])
    assert [o["kind"] for o in job] == ["Pod"]
    assert job[0]["metadata"]["annotations"][workload.RUN_SECONDS_ANNOTATION] == f"{items['job'].run_seconds:g}"
    service = workload.manifests(items["service"])
    assert service[0]["metadata"]["annotations"] == {}
    pair = workload.manifests(items["pair"])
    assert [c["name"] for c in pair[0]["spec"]["resourceClaims"]] == ["gpu-a", "gpu-b"]
    shared = workload.manifests(items["shared"])
    assert [o["kind"] for o in shared] == ["ResourceClaim", "Pod", "Pod"]
    assert {o["spec"]["resourceClaims"][0]["resourceClaimName"] for o in shared[1:]} == {items["shared"].claim}
    fixed = [workload.namespace(), workload.device_class(), workload.template()]
    for obj in (*fixed, *job, *service, *pair, *shared):
        rt = registry.by_api_version_kind(obj["apiVersion"], obj["kind"])
        assert rt is not None
        assert validate_create(rt, obj) == [], obj
