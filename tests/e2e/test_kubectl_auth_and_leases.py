"""``kubectl auth whoami``, ``auth can-i`` (and ``--list``) and ``describe node`` against a whole running stack.

The stack is `draplane up`'s (every component, two simulated nodes) with TLS and a token file: an admin
(``system:masters``), a node (``system:node:node-1``) and a plain user. The anonymous user is `./ops/up`'s
default (plain HTTP, anonymous access, where ``system:anonymous`` may write everything), on a second stack:
over TLS with no credentials kubectl would prompt for a user name.
can-i is checked against what the same identity's real write gets. Before this, on main: ``auth whoami`` said
"the server doesn't have a resource type selfsubjectreviews" / "API is not enabled", ``auth can-i`` answered
NotFound, and ``describe node`` printed ``Failed to get lease``. kubectl's requests for ``describe node``
(``-v=6``): the node, pods with ``spec.nodeName=node-1`` and not finished, the node's events (twice: by uid and
by name), and ``/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-1``.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime

import pytest
import pytest_asyncio

from services.apiserver.certs import self_signed
from services.apiserver.http.auth import TokenAuthenticator
from services.apiserver.kubeconfig import write_kubeconfig
from services.apiserver.service import Apiserver, ApiserverConfig
from services.stack import LocalStack, StackConfig
from tests.support.kubectl import Kubectl

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

TOKENS = {
    "admin": ("admin", "uid-admin", "system:masters"),
    "node": ("system:node:node-1", "uid-node-1", "system:nodes"),
    "bob": ("bob", "uid-bob", ""),
}


@dataclass
class Cluster:
    kubectl: dict[str, Kubectl]  # "anonymous" and each of TOKENS


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    root = tmp_path_factory.mktemp("auth")
    secrets = {who: f"{who}-{uuid.uuid4().hex}" for who in TOKENS}
    lines = [f'{secrets[who]},{name},{uid},"{groups}"' for who, (name, uid, groups) in TOKENS.items()]
    cert, key = self_signed(root / "pki")
    stack = LocalStack(
        StackConfig(
            bus_url=f"sqlite://{root / 'bus.db'}",
            data_dir=root / "data",
            port=0,
            nodes=2,
            authenticator=TokenAuthenticator.from_text("\n".join(lines)),
            anonymous=False,
            certfile=str(cert),
            keyfile=str(key),
        )
    )
    anonymous = Apiserver(
        ApiserverConfig(
            bus_url=f"sqlite://{root / 'anonymous.db'}", data_dir=root / "anonymous", port=0, anonymous=True
        )
    )
    await stack.start()
    await anonymous.start()
    try:
        await stack.wait_ready()
        await anonymous.wait_ready()
        assert anonymous.committer is not None
        await asyncio.wait_for(anonymous.committer.is_leader.wait(), 60)
        open_url = f"http://127.0.0.1:{anonymous.port}"
        kubectls = {"anonymous": Kubectl(write_kubeconfig(root / "anonymous" / "kubeconfig", open_url))}
        for who, token in secrets.items():
            kubectls[who] = Kubectl(write_kubeconfig(root / who / "kubeconfig", stack.url, token=token, ca_file=cert))
        yield Cluster(kubectls)
    finally:
        await anonymous.stop()
        await stack.stop()


def table(text: str) -> list[list[str]]:
    return [re.split(r"\s{2,}", line.strip()) for line in text.strip().splitlines()]


async def test_describe_node_shows_its_lease(cluster: Cluster) -> None:
    k = cluster.kubectl["admin"]
    await k("wait", "node", "--all", "--for=condition=Ready", "--timeout=60s", timeout=90)
    described = await k("describe", "node", "node-1")
    assert described.err == ""
    assert not re.search(r"(?i)fail|error", described.out), described.out
    section = re.search(
        r"^Lease:\n  HolderIdentity:  (.*)\n  AcquireTime:     (.*)\n  RenewTime:       (.*)\n", described.out, re.M
    )
    assert section is not None, described.out
    assert section.groups()[:2] == ("node-1", "<unset>")
    lease = json.loads((await k("get", "lease", "-n", "kube-node-lease", "node-1", "-o", "json")).out)
    assert lease["spec"]["holderIdentity"] == "node-1" and lease["spec"]["leaseDurationSeconds"] == 40
    # describe prints RenewTime to the second; the lease read after it can only have moved on.
    described_renewal = datetime.strptime(section.group(3), "%a, %d %b %Y %H:%M:%S %z")
    renewed = datetime.fromisoformat(lease["spec"]["renewTime"].replace("Z", "+00:00"))
    created = datetime.fromisoformat(lease["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    assert created <= described_renewal <= renewed
    listed = table((await k("get", "leases", "-n", "kube-node-lease")).out)
    assert listed[0] == ["NAME", "HOLDER", "AGE"]
    assert sorted(row[:2] for row in listed[1:]) == [["node-1", "node-1"], ["node-2", "node-2"]]


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        ("anonymous", [["Username", "system:anonymous"], ["Groups", "[system:unauthenticated]"]]),
        (
            "admin",
            [["Username", "admin"], ["UID", "uid-admin"], ["Groups", "[system:masters system:authenticated]"]],
        ),
        (
            "node",
            [
                ["Username", "system:node:node-1"],
                ["UID", "uid-node-1"],
                ["Groups", "[system:nodes system:authenticated]"],
            ],
        ),
        ("bob", [["Username", "bob"], ["UID", "uid-bob"], ["Groups", "[system:authenticated]"]]),
    ],
)
async def test_auth_whoami(cluster: Cluster, who: str, expected: list[list[str]]) -> None:
    result = await cluster.kubectl[who]("auth", "whoami")
    assert result.err == ""
    assert table(result.out) == [["ATTRIBUTE", "VALUE"], *expected]


CLAIM = """apiVersion: resource.k8s.io/v1alpha3
kind: ResourceClaim
metadata: {{name: {name}, namespace: {ns}}}
spec:
  devices:
    requests: [{{name: gpu, deviceClassName: gpu.example.com}}]
"""


@pytest.mark.parametrize(("who", "can"), [("anonymous", True), ("admin", True), ("node", False), ("bob", False)])
async def test_auth_can_i_create_resourceclaims_is_what_a_create_gets(cluster: Cluster, who: str, can: bool) -> None:
    ns = f"t-{uuid.uuid4().hex[:8]}"
    await cluster.kubectl["anonymous" if who == "anonymous" else "admin"]("create", "namespace", ns)
    k = cluster.kubectl[who]
    answer = await k("auth", "can-i", "create", "resourceclaims", "-n", ns, ok=False)
    assert (answer.code, answer.out, answer.err) == ((0, "yes\n", "") if can else (1, "no\n", ""))
    created = await k("create", "-f", "-", stdin=CLAIM.format(name="c", ns=ns), ok=False)
    assert (created.code == 0) == can, created.err
    if not can:
        assert "is forbidden" in created.err


@pytest.mark.parametrize(
    ("who", "args", "can"),
    [
        ("node", ("create", "resourceslices", "-A"), True),
        ("node", ("update", "pods", "--subresource=status"), True),
        ("node", ("update", "pods"), False),
        ("node", ("update", "leases", "-n", "kube-node-lease"), True),
        ("node", ("delete", "namespaces", "-A"), False),
        ("bob", ("get", "pods", "-A"), True),
        ("bob", ("patch", "nodes", "-A"), False),
        ("admin", ("delete", "namespaces", "-A"), True),
    ],
)
async def test_auth_can_i(cluster: Cluster, who: str, args: tuple[str, ...], can: bool) -> None:
    answer = await cluster.kubectl[who]("auth", "can-i", *args, ok=False)
    assert (answer.code, answer.out) == ((0, "yes\n") if can else (1, "no\n")), answer.err
    assert answer.err == ""


async def test_a_node_can_renew_its_own_lease_only(cluster: Cluster) -> None:
    """can-i says yes to updating leases; NodeRestriction (admission, not the authorizer) then limits the node
    to its own, as in Kubernetes."""
    k = cluster.kubectl["node"]
    own = await k("annotate", "lease", "-n", "kube-node-lease", "node-1", "checked=yes")
    assert own.code == 0
    other = await k("annotate", "lease", "-n", "kube-node-lease", "node-2", "checked=yes", ok=False)
    assert other.code == 1
    assert other.err == (
        'Error from server (Forbidden): leases.coordination.k8s.io "node-2" is forbidden: '
        "can only access node lease with the same name as the requesting node\n"
    )


async def test_auth_can_i_list(cluster: Cluster) -> None:
    bob = await cluster.kubectl["bob"]("auth", "can-i", "--list", "-n", "default")
    assert bob.err == ""
    assert table(bob.out) == [
        ["Resources", "Non-Resource URLs", "Resource Names", "Verbs"],
        ["*.*", "[]", "[]", "[get list watch]"],
        ["[*]", "[]", "[get]"],
    ]
    node = table((await cluster.kubectl["node"]("auth", "can-i", "--list")).out)
    assert ["leases.coordination.k8s.io", "[]", "[]", "[create delete update]"] in node
    admin = table((await cluster.kubectl["anonymous"]("auth", "can-i", "--list")).out)
    assert admin[1] == ["*.*", "[]", "[]", "[*]"]


async def test_a_lease_is_patched_and_watched_like_any_resource(cluster: Cluster) -> None:
    k = cluster.kubectl["admin"]
    watch = await k.spawn(
        "get", "lease", "-n", "kube-node-lease", "node-2", "--watch", "-o", "jsonpath={.spec.holderIdentity}{'\\n'}"
    )
    try:
        assert watch.stdout is not None
        first = await asyncio.wait_for(watch.stdout.readline(), 30)
        assert first == b"node-2\n"
        patch = '{"spec": {"holderIdentity": "someone-else", "leaseTransitions": 1}}'
        await k("patch", "lease", "-n", "kube-node-lease", "node-2", "--type=strategic", "-p", patch)
        seen = [first]
        while seen[-1] != b"someone-else\n":  # the node agent's renewals may come first
            seen.append(await asyncio.wait_for(watch.stdout.readline(), 30))
    finally:
        watch.kill()
        await watch.wait()
    zero = await k(
        "patch",
        "lease",
        "-n",
        "kube-node-lease",
        "node-2",
        "--type=merge",
        "-p",
        '{"spec":{"leaseDurationSeconds":0}}',
        ok=False,
    )
    assert (zero.code, zero.err) == (
        1,
        'The Lease "node-2" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0\n',
    )
