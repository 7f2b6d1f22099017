"""Legacy adoption, nil names, the admin-access gate, recreation and reservation for bypassed scheduling."""

from __future__ import annotations

from claim_fixtures import (
    NS,
    RG,
    allocate,
    allow_admin_access,
    claim,
    claim_controller,
    claims_of,
    consumer,
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


async def test_legacy_claim_is_adopted(log: LogHarness, admin: Client) -> None:
    """A pre-1.28 claim (owned by the pod, named <pod>-<podclaim>, no annotation) is recorded, not replaced."""
    await admin.create(RG, "resourceclaimtemplates", template())
    p = await admin.create("", "pods", pod("web-0", from_template("gpu")))
    legacy = await admin.create(RG, "resourceclaims", claim("web-0-gpu", owner=p))
    async with claim_controller(log) as running:
        recorded = await eventually(lambda: recorded_names(admin, "web-0"), what="the legacy claim recorded")
        assert recorded == {"gpu": "web-0-gpu"}
        assert running.sample(ATTEMPTS) == 0
    assert [c["metadata"]["uid"] for c in admin.list(RG, "resourceclaims", NS)] == [legacy["metadata"]["uid"]]


async def test_claim_with_the_legacy_name_but_another_owner_is_not_adopted(log: LogHarness, admin: Client) -> None:
    await admin.create(RG, "resourceclaimtemplates", template())
    other = await admin.create("", "pods", pod("other"))
    p = await admin.create("", "pods", pod("web-0", from_template("gpu")))
    await admin.create(RG, "resourceclaims", claim("web-0-gpu", owner=other))
    async with claim_controller(log):
        recorded = await eventually(lambda: recorded_names(admin, "web-0"), what="a new claim recorded")
    generated = claims_of(admin, p)
    assert len(generated) == 1 and recorded == {"gpu": generated[0]["metadata"]["name"]}
    assert generated[0]["metadata"]["name"] != "web-0-gpu"
    assert generated[0]["metadata"]["annotations"][POD_CLAIM_NAME_ANNOTATION] == "gpu"


async def test_nil_name_means_no_claim(log: LogHarness, admin: Client) -> None:
    """A resourceClaimStatuses entry without a name records that no claim is needed: nothing is created."""
    await admin.create(RG, "resourceclaimtemplates", template())
    p = await admin.create("", "pods", pod("skip", from_template("gpu")))
    await admin.update_status("", "pods", {**p, "status": {**p["status"], "resourceClaimStatuses": [{"name": "gpu"}]}})
    # A second pod proves the controller is working while it leaves the first alone.
    await admin.create("", "pods", pod("make", from_template("gpu")))
    async with claim_controller(log) as running:
        await eventually(lambda: recorded_names(admin, "make"), what="the other pod's claim")
        # The controller counts its attempt when its chain's reply arrives, which can be after this
        # test's informer has seen the pod status the chain wrote.
        await eventually(lambda: running.sample(ATTEMPTS) >= 1, what="the other pod's create counted")
        assert running.sample(ATTEMPTS) == 1
    assert recorded_names(admin, "skip") == {"gpu": None}
    assert claims_of(admin, p) == []


async def test_admin_access_gate_off_refuses_templates_that_need_it(log: LogHarness, admin: Client) -> None:
    await allow_admin_access(admin)
    await admin.create(RG, "resourceclaimtemplates", template("admin", admin_access=True))
    await admin.create(RG, "resourceclaimtemplates", template("plain"))
    denied = await admin.create("", "pods", pod("denied", from_template("gpu", "admin")))
    await admin.create("", "pods", pod("allowed", from_template("gpu", "plain")))
    async with claim_controller(log, gates={"DRAAdminAccess": False}) as running:
        await eventually(lambda: recorded_names(admin, "allowed"), what="the plain template's claim")
        # The denied pod keeps failing (with backoff) and never gets a claim.
        await eventually(
            lambda: running.sample("draplane_controller_sync_errors_total", controller="resourceclaim-controller") >= 2,
            what="the admin-access pod retried",
        )
        await eventually(lambda: running.sample(ATTEMPTS) >= 1, what="the plain template's create counted")
        assert running.sample(ATTEMPTS) == 1, "no create is even attempted"
    assert recorded_names(admin, "denied") is None and claims_of(admin, denied) == []


async def test_admin_access_gate_on_creates_the_claim(log: LogHarness, admin: Client) -> None:
    await allow_admin_access(admin)
    await admin.create(RG, "resourceclaimtemplates", template("admin", admin_access=True))
    p = await admin.create("", "pods", pod("web-0", from_template("gpu", "admin")))
    async with claim_controller(log, gates={"DRAAdminAccess": True}):
        await eventually(lambda: recorded_names(admin, "web-0"), what="the claim recorded")
    [generated] = claims_of(admin, p)
    assert generated["spec"]["devices"]["requests"][0]["adminAccess"] is True


async def test_recorded_claim_deleted_by_accident_is_recreated(log: LogHarness, admin: Client) -> None:
    await admin.create(RG, "resourceclaimtemplates", template())
    p = await admin.create("", "pods", pod("web-0", from_template("gpu")))
    async with claim_controller(log):
        first = (await eventually(lambda: recorded_names(admin, "web-0"), what="first claim"))["gpu"]
        assert first is not None
        await admin.delete(RG, "resourceclaims", NS, first)
        second = await eventually(
            lambda: (r := recorded_names(admin, "web-0")) and r["gpu"] != first and r["gpu"], what="a new claim"
        )
    assert [c["metadata"]["name"] for c in claims_of(admin, p)] == [second]


async def test_template_created_after_the_pod(log: LogHarness, admin: Client) -> None:
    p = await admin.create("", "pods", pod("web-0", from_template("gpu")))
    async with claim_controller(log) as running:
        await eventually(
            lambda: running.sample("draplane_controller_sync_errors_total", controller="resourceclaim-controller"),
            what="a failed attempt for the missing template",
        )
        await admin.create(RG, "resourceclaimtemplates", template(labels={"team": "ml"}))
        await eventually(lambda: recorded_names(admin, "web-0"), what="the claim once the template exists")
    [generated] = claims_of(admin, p)
    assert generated["metadata"]["labels"] == {"team": "ml"}


async def test_pod_with_node_name_gets_its_allocated_claims_reserved(log: LogHarness, admin: Client) -> None:
    """The scheduler was bypassed (spec.nodeName set at creation): the controller reserves allocated claims."""
    await admin.create(RG, "resourceclaimtemplates", template())
    p = await admin.create("", "pods", pod("web-0", from_template("gpu"), node="node-1"))
    async with claim_controller(log):
        name = (await eventually(lambda: recorded_names(admin, "web-0"), what="claim recorded"))["gpu"]
        assert name is not None
        await allocate(admin, {"metadata": {"name": name}})
        reserved = await eventually(
            lambda: (admin.get(RG, "resourceclaims", NS, name) or {}).get("status", {}).get("reservedFor"),
            what="the claim reserved for the pod",
        )
    assert reserved == [consumer(p)]
