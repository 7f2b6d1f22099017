"""The chaos workload: what gets created, as plain manifests (pure).

Why this module exists: the run needs churn that touches every path of DRA —
claims generated from templates, pods that complete, pods deleted while
pending or running, claims shared by two pods, pods with two claims — and the
mix must be reproducible from a seed. `plan` draws that mix; the manifest
builders turn an item into the objects to create.

Kinds of items:

- ``job``: one pod, one GPU from the template, completes after
  ``draplane.io/run-seconds``;
- ``service``: one pod, one GPU, runs until the workload deletes it (which may
  happen before it was scheduled);
- ``pair``: one pod with two claims from the template (two GPUs on one node);
- ``shared``: a ResourceClaim and two pods that both use it (reservedFor with
  two entries); the claim is deleted once both pods are done.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

NAMESPACE = "chaos"
DRIVER = "gpu.example.com"
TEMPLATE = "gpu"
RUN_SECONDS_ANNOTATION = "draplane.io/run-seconds"

Kind = Literal["job", "service", "pair", "shared"]
Obj = dict[str, Any]

# How often each kind is drawn.
MIX: tuple[tuple[Kind, float], ...] = (("job", 0.6), ("service", 0.2), ("pair", 0.1), ("shared", 0.1))


@dataclass(frozen=True, slots=True)
class Item:
    """One unit of work: its pods (and shared claim) and how long they run or live."""

    index: int
    kind: Kind
    run_seconds: float  # job, pair and shared pods complete after this long
    lifetime: float  # a service is deleted this long after it was created
    pods: tuple[str, ...] = field(default=())
    claim: str | None = None  # the shared claim's name

    @property
    def gpus(self) -> int:
        return {"job": 1, "service": 1, "pair": 2, "shared": 1}[self.kind]


def plan(count: int, *, seed: int, run_seconds: tuple[float, float], lifetime: tuple[float, float]) -> list[Item]:
    """``count`` pods' worth of items (a shared item counts two pods), drawn from ``seed``."""
    rng = random.Random(seed)
    kinds = [k for k, _ in MIX]
    weights = [w for _, w in MIX]
    items: list[Item] = []
    pods = 0
    while pods < count:
        kind: Kind = rng.choices(kinds, weights)[0]
        if kind == "shared" and count - pods < 2:
            kind = "job"
        n = len(items) + 1
        names = (f"s{n:05d}-a", f"s{n:05d}-b") if kind == "shared" else (f"p{n:05d}",)
        items.append(
            Item(
                index=n,
                kind=kind,
                run_seconds=round(rng.uniform(*run_seconds), 1),
                lifetime=round(rng.uniform(*lifetime), 1),
                pods=names,
                claim=f"shared-{n:05d}" if kind == "shared" else None,
            )
        )
        pods += len(names)
    return items


def namespace() -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}


def device_class() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }


def claim_spec() -> Obj:
    return {"devices": {"requests": [{"name": "gpu", "deviceClassName": DRIVER}]}}


def template() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": TEMPLATE, "namespace": NAMESPACE},
        "spec": {"spec": claim_spec()},
    }


def shared_claim(name: str) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": "chaos"}},
        "spec": claim_spec(),
    }


def pod(name: str, *, claims: Sequence[tuple[str, str, bool]], run_seconds: float | None) -> Obj:
    """A pod whose one container uses every claim: (pod claim name, claim or template name, from a template)."""
    annotations = {RUN_SECONDS_ANNOTATION: f"{run_seconds:g}"} if run_seconds is not None else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": "chaos"}, "annotations": annotations},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 5,
            "containers": [
                {
                    "name": "ctr",
                    "image": "busybox:1.36",
                    "command": ["sh", "-c", "trap 'exit 0' TERM; sleep 9999 & wait"],
                    "resources": {"claims": [{"name": c} for c, _, _ in claims]},
                }
            ],
            "resourceClaims": [
                {"name": c, "resourceClaimTemplateName": source}
                if templated
                else {"name": c, "resourceClaimName": source}
                for c, source, templated in claims
            ],
        },
    }


def manifests(item: Item) -> list[Obj]:
    """What to create for ``item``, in order (a shared claim before its pods)."""
    if item.kind == "shared":
        assert item.claim is not None
        return [
            shared_claim(item.claim),
            *(pod(p, claims=[("gpu", item.claim, False)], run_seconds=item.run_seconds) for p in item.pods),
        ]
    if item.kind == "pair":
        claims = [("gpu-a", TEMPLATE, True), ("gpu-b", TEMPLATE, True)]
        return [pod(item.pods[0], claims=claims, run_seconds=item.run_seconds)]
    run_seconds = None if item.kind == "service" else item.run_seconds
    return [pod(item.pods[0], claims=[("gpu", TEMPLATE, True)], run_seconds=run_seconds)]
