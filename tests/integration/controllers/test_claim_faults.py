"""Exactly one claim per pod claim, recorded in the pod status, whatever write fails or wherever the controller dies."""

from __future__ import annotations

import functools
from typing import Any

from claim_fixtures import (
    NS,
    RG,
    FaultyWriter,
    claim_controller,
    claims_of,
    from_template,
    pod,
    recorded_names,
    template,
)

from services.kube.resourceclaim import POD_CLAIM_NAME_ANNOTATION
from services.runtime.client import Client
from services.testing.harness import LogHarness
from tests.support.eventually import eventually

ATTEMPTS = "resourceclaim_controller_create_attempts_total"
FAILURES = "resourceclaim_controller_create_failures_total"


async def two_claim_pod(admin: Client, name: str = "web-0") -> dict[str, Any]:
    await admin.create(RG, "resourceclaimtemplates", template())
    return await admin.create("", "pods", pod(name, from_template("gpu"), from_template("extra")))


async def assert_one_claim_each(admin: Client, p: dict[str, Any]) -> None:
    """Both pod claims recorded, each naming the one claim generated for it, and no other claim exists."""
    name = p["metadata"]["name"]
    recorded = await eventually(
        lambda: (r := recorded_names(admin, name)) and len(r) == 2 and r, what="both claims recorded in the pod status"
    )
    owned = claims_of(admin, p)
    assert sorted(c["metadata"]["annotations"][POD_CLAIM_NAME_ANNOTATION] for c in owned) == ["extra", "gpu"]
    assert {c["metadata"]["annotations"][POD_CLAIM_NAME_ANNOTATION]: c["metadata"]["name"] for c in owned} == recorded
    assert len(admin.list(RG, "resourceclaims", NS)) == 2
    for c in owned:
        assert c["metadata"]["generateName"] == f"{name}-{c['metadata']['annotations'][POD_CLAIM_NAME_ANNOTATION]}-"
        assert c["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] is True


async def test_happy_path(log: LogHarness, admin: Client) -> None:
    p = await two_claim_pod(admin)
    async with claim_controller(log) as running:
        await assert_one_claim_each(admin, p)
        # The controller counts a create attempt when its chain's reply arrives, which can be after this
        # test's informer has seen what the chain wrote.
        await eventually(lambda: running.sample(ATTEMPTS) >= 2, what="both creates counted")
        assert running.sample(ATTEMPTS) == 2 and running.sample(FAILURES) == 0


class CountingWriter:
    """Passes every write through, noting which method sent it (and the requests of each chain)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[tuple[str, list[tuple[str, str]]]] = []

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if name not in ("create", "update", "update_status", "patch", "delete", "write_chain"):
            return target

        async def write(*args: Any, **kwargs: Any) -> Any:
            chain = [(r.op, r.resource) for r in args[0]] if name == "write_chain" else []
            self.sent.append((name, chain))
            return await target(*args, **kwargs)

        return write


async def test_claims_and_pod_status_are_one_chain_through_the_committer(log: LogHarness, admin: Client) -> None:
    p = await two_claim_pod(admin)
    writers: list[CountingWriter] = []

    def wrap(inner: Any) -> CountingWriter:
        writers.append(CountingWriter(inner))
        return writers[0]

    async with claim_controller(log, wrap=wrap):
        await assert_one_claim_each(admin, p)
    creates = [("create", "resourceclaims")] * 2
    assert writers[0].sent == [("write_chain", [*creates, ("patch", "pods")])], "one trip through the log"


async def test_claim_create_fails(log: LogHarness, admin: Client) -> None:
    p = await two_claim_pod(admin)
    faulty: list[FaultyWriter] = []

    def wrap(inner: Any) -> FaultyWriter:
        faulty.append(FaultyWriter(inner, fail_creates=3))
        return faulty[0]

    async with claim_controller(log, wrap=wrap) as running:
        await assert_one_claim_each(admin, p)
        # Both creates go in one chain: in each of the 3 failed syncs the first failed and the committer
        # refused the second unapplied (not an attempt: kube's controller stops at the first failure).
        assert running.sample(FAILURES) == 3
        await eventually(lambda: running.sample(ATTEMPTS) >= 5, what="the successful creates counted")
        assert running.sample(ATTEMPTS) == 5, "3 failed attempts, then one create per pod claim"
        assert faulty[0].fail_creates == 0


async def test_pod_status_write_fails_after_create(log: LogHarness, admin: Client) -> None:
    p = await two_claim_pod(admin)
    writers: list[FaultyWriter] = []

    def wrap(inner: Any) -> FaultyWriter:
        writers.append(FaultyWriter(inner, fail_pod_status=3))
        return writers[0]

    async with claim_controller(log, wrap=wrap) as running:
        await assert_one_claim_each(admin, p)
        assert writers[0].pod_status_writes == 4, "three failed status writes, then one that records both"
        assert running.sample(ATTEMPTS) == 2, "retries found the claims they had created"
        assert running.sample(FAILURES) == 0


async def test_killed_between_create_and_pod_status_write(log: LogHarness, admin: Client) -> None:
    await admin.create(RG, "resourceclaimtemplates", template())
    p = await admin.create("", "pods", pod("web-0", from_template("gpu")))
    writers: list[FaultyWriter] = []

    def wrap(inner: Any) -> FaultyWriter:
        writers.append(FaultyWriter(inner, hang_after_create=True))
        return writers[0]

    async with claim_controller(log, wrap=wrap) as first:
        await writers[0].created.wait()
        await first.stop()  # the process dies after the create, before the pod-status write
    orphan = await eventually(lambda: claims_of(admin, p), what="the claim created before the crash")
    assert recorded_names(admin, "web-0") is None, "the crash came before the pod status was written"

    # A new controller with a fresh informer (a restarted process) records the claim instead of creating another.
    async with claim_controller(log) as second:
        recorded = await eventually(lambda: recorded_names(admin, "web-0"), what="the claim recorded after restart")
        assert recorded == {"gpu": orphan[0]["metadata"]["name"]}
        assert second.sample(ATTEMPTS) == 0
    assert len(admin.list(RG, "resourceclaims", NS)) == 1


async def test_retry_before_the_informer_caught_up_uses_the_mutation_cache(log: LogHarness, admin: Client) -> None:
    """A controller whose informer lags (here: frozen) must not create a second claim on a retry."""
    await admin.create(RG, "resourceclaimtemplates", template())
    p = await admin.create("", "pods", pod("web-0", from_template("gpu")))
    lagging = await log.informer()
    assert lagging.store("", "pods").get(NS, "web-0") is not None
    await lagging.stop()  # it will never see the claim the controller creates
    writers: list[FaultyWriter] = []

    def wrap(inner: Any) -> FaultyWriter:
        writers.append(FaultyWriter(inner, fail_pod_status=1))
        return writers[0]

    # wait=False: the client does not wait for its (frozen) informer to see its writes.
    async with claim_controller(log, informer=lagging, wrap=wrap, wait=False) as running:
        recorded = await eventually(lambda: recorded_names(admin, "web-0"), what="the claim recorded")
        owned = claims_of(admin, p)
        assert len(owned) == 1 and recorded == {"gpu": owned[0]["metadata"]["name"]}
        # The controller counts a create attempt when its chain's reply arrives, which can be after this
        # test's informer has seen what the chain wrote.
        await eventually(lambda: running.sample(ATTEMPTS) >= 1, what="the create counted")
        assert running.sample(ATTEMPTS) == 1
        assert lagging.store(RG, "resourceclaims").get(NS, owned[0]["metadata"]["name"]) is None
    assert len(admin.list(RG, "resourceclaims", NS)) == 1


async def test_many_pods_with_faults_get_exactly_one_claim_each(log: LogHarness, admin: Client) -> None:
    await admin.create(RG, "resourceclaimtemplates", template())
    pods = [await admin.create("", "pods", pod(f"web-{i}", from_template("gpu"))) for i in range(20)]

    def wrap(inner: Any) -> FaultyWriter:
        return FaultyWriter(inner, fail_creates=5, fail_pod_status=7)

    async with claim_controller(log, wrap=wrap, workers=4):
        for p in pods:
            await eventually(functools.partial(recorded_names, admin, p["metadata"]["name"]), what="claims recorded")
    for p in pods:
        owned = claims_of(admin, p)
        assert len(owned) == 1
        assert recorded_names(admin, p["metadata"]["name"]) == {"gpu": owned[0]["metadata"]["name"]}
    assert len(admin.list(RG, "resourceclaims", NS)) == 20
