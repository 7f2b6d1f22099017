"""The resourceclaim controller sends a pod's claim creates and its pod-status patch as one chain of requests.

The controller picks each claim's name (``generateName`` + the committer's
suffix rule) so that the status patch can name it before the create is
answered; the committer applies the patch only if the creates before it
succeeded. These tests drive `ResourceClaimController.sync_pod` against a
writer that answers chains from a script, with no log.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from services.api.machinery import status as st
from services.controllers.metrics import ControllerMetrics
from services.controllers.resourceclaim import FIELD_MANAGER, ResourceClaimController, SyncError
from services.kube.generated_names import GENERATE_NAME_ALPHABET
from services.kube.resourceclaim import POD_CLAIM_NAME_ANNOTATION
from services.runtime.informer import Informer
from topics.envelope import Op, Request, UserInfo

RG = "resource.k8s.io"
NS = "ns"
Obj = dict[str, Any]
Answer = Callable[[Request], Obj | st.StatusError]


def pod(*claims: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": NS, "uid": "pod-uid", "resourceVersion": "5"},
        "spec": {
            "containers": [{"name": "ctr", "image": "pause"}],
            "resourceClaims": [{"name": c, "resourceClaimTemplateName": "tmpl"} for c in claims],
        },
    }


TEMPLATE: Obj = {
    "metadata": {"name": "tmpl", "namespace": NS},
    "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}}},
}


def applied(request: Request) -> Obj:
    """What the committer answers for ``request`` when it applies it."""
    if request.op == "create":
        assert request.object is not None
        return {**request.object, "metadata": {**request.object["metadata"], "uid": f"uid-{request.name}"}}
    return {**pod(), "status": {"resourceClaimStatuses": request.patch["status"]["resourceClaimStatuses"]}}


class ChainWriter:
    """A `Writer` whose chains are answered by ``answer`` per request (a refusal refuses the rest, unapplied)."""

    def __init__(self) -> None:
        self.chains: list[list[Request]] = []
        self.answer: Answer = applied
        self._ids = itertools.count()

    def request(
        self,
        op: Op,
        group: str,
        resource: str,
        namespace: str,
        name: str,
        *,
        obj: Obj | None = None,
        patch: Any = None,
        patch_type: str | None = None,
        options: dict[str, Any] | None = None,
        after_version: bool = False,
    ) -> Request:
        user = UserInfo("system:kube-controller-manager")
        return Request(
            str(next(self._ids)),
            op,
            group,
            resource,
            namespace,
            name,
            user,
            "me",
            object=obj,
            patch=patch,
            patch_type=patch_type,
            options=options or {},
            after_version=after_version,
        )

    async def write_chain(self, requests: Sequence[Request]) -> list[Obj | st.StatusError]:
        self.chains.append(list(requests))
        results: list[Obj | st.StatusError] = []
        for request in requests:
            if results and isinstance(results[-1], st.StatusError):
                results.append(st.conflict(request.group, request.resource, request.name, "not applied"))
            else:
                results.append(self.answer(request))
        return results

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a lone {name}: the controller should have sent a chain")


class Events:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    async def record(self, involved: Obj, type_: str, reason: str, message: str) -> None:
        self.seen.append((type_, reason, message))


def controller(writer: ChainWriter, events: Events | None = None) -> ResourceClaimController:
    class _NoBus:
        pass

    informer = Informer(_NoBus(), name="unit")  # type: ignore[arg-type]
    c = ResourceClaimController(informer, writer, metrics=ControllerMetrics(), recorder=events or Events())  # type: ignore[arg-type]
    c.register()
    informer.store(RG, "resourceclaimtemplates")._put((NS, "tmpl"), TEMPLATE)
    return c


def put_pod(c: ResourceClaimController, p: Obj) -> None:
    c.informer.store("", "pods")._put((NS, "web-0"), p)


def counts(c: ResourceClaimController) -> tuple[float, float]:
    return c.metrics.create_attempts._value.get(), c.metrics.create_failures._value.get()


async def test_creates_and_the_pod_status_go_as_one_chain() -> None:
    writer = ChainWriter()
    c = controller(writer)
    put_pod(c, pod("gpu", "nic"))

    await c.sync_pod(NS, "web-0")

    (chain,) = writer.chains
    assert [(r.op, r.resource) for r in chain] == [("create", "resourceclaims")] * 2 + [("patch", "pods")]
    names = {}
    for create, pod_claim in zip(chain, ("gpu", "nic"), strict=False):
        assert create.object is not None
        meta = create.object["metadata"]
        assert meta["generateName"] == f"web-0-{pod_claim}-", "stored as Kubernetes stores a generated claim"
        assert re.fullmatch(f"web-0-{pod_claim}-[{GENERATE_NAME_ALPHABET}]{{5}}", meta["name"])
        assert create.name == meta["name"] and meta["annotations"][POD_CLAIM_NAME_ANNOTATION] == pod_claim
        names[pod_claim] = meta["name"]
    status = chain[-1]
    assert status.options == {"subresource": "status", "fieldManager": FIELD_MANAGER}
    assert status.patch_type == "strategic"
    assert status.patch["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": names["gpu"]},
        {"name": "nic", "resourceClaimName": names["nic"]},
    ]
    assert not status.after_version
    assert counts(c) == (2, 0)
    assert c.claim_cache.get(NS, names["gpu"]) is not None, "the mutation cache holds what was created"


async def test_a_taken_name_fails_like_any_create_and_the_retry_picks_another() -> None:
    writer = ChainWriter()
    events = Events()
    c = controller(writer, events)
    put_pod(c, pod("gpu"))

    def taken(request: Request) -> Obj | st.StatusError:
        if request.op == "create":
            return st.generate_name_conflict(RG, "resourceclaims", request.name)  # what the committer answers
        return applied(request)

    writer.answer = taken
    with pytest.raises(SyncError, match=r"PodResourceClaim gpu: create ResourceClaim web-0-gpu-\w{5}: .* already exists"):
        await c.sync_pod(NS, "web-0")
    first = writer.chains[0][0].name
    assert events.seen == [
        (
            "Warning",
            "FailedResourceClaimCreation",
            f'PodResourceClaim gpu: create ResourceClaim {first}: resourceclaims.resource.k8s.io "{first}" already exists'
            ", the server was not able to generate a unique name for the object",
        )
    ]
    assert counts(c) == (1, 1)

    writer.answer = applied
    await c.sync_pod(NS, "web-0")
    retry = writer.chains[1]
    assert retry[0].name != first
    assert retry[-1].patch["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": retry[0].name}]
    assert counts(c) == (2, 1)


async def test_a_failed_status_write_after_the_create_is_retried_without_a_second_create() -> None:
    writer = ChainWriter()
    c = controller(writer)
    put_pod(c, pod("gpu"))

    def status_fails(request: Request) -> Obj | st.StatusError:
        if request.resource == "pods":
            return st.conflict("", "pods", "web-0", "not applied")
        return applied(request)

    writer.answer = status_fails
    with pytest.raises(SyncError, match="update pod ns/web-0 ResourceClaimStatuses"):
        await c.sync_pod(NS, "web-0")
    created = writer.chains[0][0].name

    # The informer has not seen the claim yet: the mutation cache finds it, so the retry only records it.
    writer.answer = applied
    await c.sync_pod(NS, "web-0")
    (retry,) = writer.chains[1]
    assert retry.op == "patch" and retry.patch["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": created}
    ]
    assert counts(c) == (1, 0)


async def test_a_recorded_claim_needs_no_write() -> None:
    writer = ChainWriter()
    c = controller(writer)
    p = pod("gpu")
    p["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "web-0-gpu-b2c4d"}]}
    put_pod(c, p)
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "web-0", "uid": "pod-uid", "controller": True}
    claim: Obj = {"metadata": {"name": "web-0-gpu-b2c4d", "namespace": NS, "ownerReferences": [owner]}}
    c.claims._put((NS, "web-0-gpu-b2c4d"), claim)

    await c.sync_pod(NS, "web-0")
    assert writer.chains == []


async def test_a_later_pod_claim_that_cannot_be_made_still_leaves_the_earlier_claims_created() -> None:
    """As kube's syncPod (1.31.14 pkg/controller/resourceclaim/controller.go): handleClaim creates each claim in
    turn, and the first error ends the sync before the pod status is written — the earlier claims exist."""
    writer = ChainWriter()
    events = Events()
    c = controller(writer, events)
    p = pod("gpu")
    p["spec"]["resourceClaims"].append({"name": "nic", "resourceClaimTemplateName": "missing"})
    put_pod(c, p)

    with pytest.raises(SyncError, match='PodResourceClaim nic: resource claim template "missing"'):
        await c.sync_pod(NS, "web-0")

    (chain,) = writer.chains
    assert [(r.op, r.resource) for r in chain] == [("create", "resourceclaims")], "no pod status naming only one"
    assert c.claim_cache.get(NS, chain[0].name) is not None
    assert counts(c) == (1, 0)
    assert [reason for _, reason, _ in events.seen] == ["FailedResourceClaimCreation"]
