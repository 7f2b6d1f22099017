"""Who may call and who may write: the token file, no anonymous writes outside the demo, RBAC's 403.

Through the REST API of a running stack over HTTPS:
- without a token, or with one the file does not hold, every request is 401
  (only the health endpoints answer), and nothing is written;
- a token from the file authenticates its user with the file's groups;
  ``system:masters`` (here only through the group column) may write, other
  users may read but get Kubernetes' RBAC 403 on every write;
- anonymous access exists only where it is configured: ``draplane
  apiserver`` leaves it off unless ``--anonymous`` is given, and even with
  anonymous requests accepted, writes need the demo's admission setting.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from services.apiserver.admission_chain import build_admission
from services.cli import build_parser
from services.cmd.apiserver import config_from
from tests.security.apiservers import ADMIN, ALICE, CAROL, RunningApiserver, assert_status, call, running_apiserver

pytestmark = pytest.mark.asyncio(loop_scope="module")

CLAIMS = "/apis/resource.k8s.io/v1alpha3/namespaces/default/resourceclaims"
PODS = "/api/v1/namespaces/default/pods"


def claim(name: str) -> dict[str, object]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
    }


def pod(name: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }


async def test_no_token_or_an_unknown_token_is_401_and_writes_nothing(secured: RunningApiserver) -> None:
    for token in (None, "not-in-the-file", ""):
        async with secured.session(token) as session:
            for method, path, body in [
                ("GET", CLAIMS, None),
                ("POST", CLAIMS, claim("sneaky")),
                ("PUT", f"{CLAIMS}/sneaky", claim("sneaky")),
                ("DELETE", f"{CLAIMS}/sneaky", None),
                ("GET", "/api", None),
                ("GET", "/version", None),
                ("GET", "/apis/resource.k8s.io/v1alpha3", None),
            ]:
                reply = await call(session, method, path, body)
                assert_status(reply, 401, "Unauthorized", "Unauthorized")
            async with session.get("/healthz") as health:
                assert health.status == 200 and await health.text() == "ok"
    async with secured.session(ADMIN) as admin:
        assert (await call(admin, "GET", f"{CLAIMS}/sneaky")).status == 404


async def test_a_wrong_scheme_is_not_a_token(secured: RunningApiserver) -> None:
    async with secured.session() as session:
        for header in (f"Basic {ADMIN}", f"Token {ADMIN}", ADMIN, "Bearer"):
            async with session.get(CLAIMS, headers={"Authorization": header}) as resp:
                assert resp.status == 401, header


async def test_users_without_write_rights_get_rbac_403_with_kubernetes_message(secured: RunningApiserver) -> None:
    async with secured.session(ADMIN) as admin, secured.session(ALICE) as alice:
        created = await call(admin, "POST", CLAIMS, claim("owned-by-admin"))
        assert created.status == 201
        assert (await call(admin, "POST", PODS, pod("web"))).status == 201

        assert (await call(alice, "GET", CLAIMS)).status == 200  # reads are for every authenticated user
        assert_status(
            await call(alice, "POST", CLAIMS, claim("by-alice")),
            403,
            "Forbidden",
            'resourceclaims.resource.k8s.io is forbidden: User "alice" cannot create resource "resourceclaims" '
            'in API group "resource.k8s.io" in the namespace "default"',
        )
        assert_status(
            await call(alice, "PUT", f"{CLAIMS}/owned-by-admin", created.doc),
            403,
            "Forbidden",
            'resourceclaims.resource.k8s.io "owned-by-admin" is forbidden: User "alice" cannot update resource '
            '"resourceclaims" in API group "resource.k8s.io" in the namespace "default"',
        )
        reply = await call(
            alice,
            "PATCH",
            f"{PODS}/web/status",
            {"status": {"phase": "Running"}},
            content_type="application/merge-patch+json",
        )
        assert_status(
            reply,
            403,
            "Forbidden",
            'pods "web" is forbidden: User "alice" cannot update resource "pods/status" in API group "" '
            'in the namespace "default"',
        )
        assert reply.doc["details"] == {"name": "web", "kind": "pods"}
        assert_status(
            await call(alice, "DELETE", f"{CLAIMS}/owned-by-admin"),
            403,
            "Forbidden",
            'resourceclaims.resource.k8s.io "owned-by-admin" is forbidden: User "alice" cannot delete resource '
            '"resourceclaims" in API group "resource.k8s.io" in the namespace "default"',
        )
        assert_status(
            await call(alice, "POST", "/api/v1/namespaces", {"metadata": {"name": "alices"}}),
            403,
            "Forbidden",
            'namespaces is forbidden: User "alice" cannot create resource "namespaces" in API group "" '
            "at the cluster scope",
        )
        # Nothing alice tried was written.
        assert (await call(admin, "GET", f"{CLAIMS}/by-alice")).status == 404
        assert (await call(admin, "GET", f"{CLAIMS}/owned-by-admin")).doc["metadata"]["uid"] == created.doc["metadata"][
            "uid"
        ]


async def test_groups_come_from_the_token_file(secured: RunningApiserver) -> None:
    """carol's only right is the system:masters group her line in the file gives her."""
    async with secured.session(CAROL) as carol:
        reply = await call(carol, "POST", CLAIMS, claim("by-carol"))
        assert reply.status == 201, reply.doc
        deleted = await call(carol, "DELETE", f"{CLAIMS}/by-carol")
        assert deleted.status == 200


async def test_anonymous_is_off_unless_asked_for() -> None:
    """`draplane apiserver` accepts anonymous requests only with --anonymous (the demo's `draplane up` sets it)."""
    parser = build_parser()
    assert config_from(parser.parse_args(["apiserver"])).anonymous is False
    assert config_from(parser.parse_args(["apiserver", "--anonymous"])).anonymous is True


async def test_the_demo_lets_anonymous_write_and_only_the_demo(tmp_path: Path) -> None:
    # The demo (draplane up without a token file): anonymous requests accepted and allowed to write.
    async with running_apiserver(tmp_path / "demo", anonymous=True) as demo, demo.session() as anonymous:
        assert (await call(anonymous, "POST", CLAIMS, claim("demo"))).status == 201
    # Anonymous requests accepted, but without the demo's admission setting: reads only. With a token
    # file, a token it does not hold is 401, never a fallback to anonymous.
    # Anonymous requests accepted, but without the demo's admission setting: reads only.
    async with (
        running_apiserver(
            tmp_path / "read-only", anonymous=True, tokens=f'{ADMIN},admin,uid,"system:masters"\n',
            admission=build_admission(anonymous_writes=False),
        ) as server,
        server.session() as anonymous,
    ):  # fmt: skip
        assert (await call(anonymous, "GET", CLAIMS)).status == 200
        assert_status(
            await call(anonymous, "POST", CLAIMS, claim("anon")),
            403,
            "Forbidden",
            'resourceclaims.resource.k8s.io is forbidden: User "system:anonymous" cannot create resource '
            '"resourceclaims" in API group "resource.k8s.io" in the namespace "default"',
        )
        async with server.session("made-up") as bogus:
            assert_status(await call(bogus, "GET", CLAIMS), 401, "Unauthorized")
