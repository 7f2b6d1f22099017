"""A real client-go (v0.31.14) client speaking protobuf to ``draplane up`` (issue 20, item 2).

kube-scheduler and kube-controller-manager default to ``ContentType:
application/vnd.kubernetes.protobuf``: every body they send is protobuf and
they accept protobuf first. ``protobuf_client/main.go`` is such a client: it
creates, gets, lists, watches, updates (and status), patches, binds and
deletes a Pod and a ResourceClaim, lists PartialObjectMetadata through the
metadata client as the garbage collector does, decodes NotFound and Conflict
errors, and checks that every response was protobuf.

It is built once per source and Go version under ``.cache/protobuf-client/``
from the Go module proxy (``GOFLAGS=-mod=mod``). Without Go the test skips
with the reason; with ``DRAPLANE_REQUIRE_UPSTREAM=1`` (``ops/test`` sets it
when Go is there) a missing toolchain or a failed build fails it instead.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.stack.processes import Command

SOURCE = Path(__file__).with_name("protobuf_client") / "main.go"
CACHE = Path(__file__).resolve().parents[2] / ".cache" / "protobuf-client"
CLIENT_GO = "v0.31.14"
GO_MOD = "module draplane.test/protobufclient\n\ngo 1.22.0\n"


def _unavailable(reason: str) -> None:
    if os.environ.get("DRAPLANE_REQUIRE_UPSTREAM") == "1":
        pytest.fail(f"DRAPLANE_REQUIRE_UPSTREAM=1 but {reason}")
    pytest.skip(reason)


def _go(go: str, *args: str, cwd: Path) -> None:
    env = {**os.environ, "GOFLAGS": "-mod=mod"}
    done = subprocess.run([go, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        _unavailable(f"go {' '.join(args)} failed:\n{done.stdout[-2000:]}{done.stderr[-4000:]}")


@pytest.fixture(scope="module")
def protobuf_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = shutil.which("go")
    if go is None:
        _unavailable("Go is not installed: the client-go protobuf client cannot be built")
        raise AssertionError("unreachable")
    version = subprocess.run([go, "version"], capture_output=True, text=True, check=True).stdout
    key = hashlib.sha256(SOURCE.read_bytes() + version.encode() + CLIENT_GO.encode()).hexdigest()[:16]
    binary = CACHE / key / "protobuf_client"
    if binary.exists():
        return binary
    work = tmp_path_factory.mktemp("protobuf-client-src")
    shutil.copy(SOURCE, work / "main.go")
    (work / "go.mod").write_text(GO_MOD)
    _go(go, "get", *(f"k8s.io/{m}@{CLIENT_GO}" for m in ("client-go", "api", "apimachinery")), cwd=work)
    built = work / "protobuf_client"
    _go(go, "build", "-o", str(built), ".", cwd=work)
    binary.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(built, binary)
    return binary


@pytest.fixture(scope="module")
def stack_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    data = tmp_path_factory.mktemp("protobuf-up") / "d"
    cmd = Command("up", "--data", str(data), "--listen", "127.0.0.1:0", "--nodes", "1")
    try:
        cmd.wait_for_line(r"draplane is ready: (\S+)", timeout=180)
        yield data
    finally:
        cmd.stop()


@pytest.mark.timeout(1800)  # the first build compiles client-go (minutes on a busy machine); later runs reuse it
def test_client_go_speaks_protobuf_to_draplane(protobuf_client: Path, stack_data: Path) -> None:
    done = subprocess.run(
        [str(protobuf_client), str(stack_data / "kubeconfig"), "default"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("OK "), done.stdout[-4000:]
    # Every verb went through: creates and updates sent protobuf bodies, watches streamed frames.
    lines = done.stdout
    assert (
        "POST /api/v1/namespaces/default/pods -> 201 application/vnd.kubernetes.protobuf (sent "
        + ("application/vnd.kubernetes.protobuf)")
        in lines
    )
    assert "application/vnd.kubernetes.protobuf;stream=watch" in lines
    assert "PUT /api/v1/namespaces/default/pods/pb-pod/status -> 200" in lines
    assert "POST /api/v1/namespaces/default/pods/pb-pod/binding -> 201" in lines
    assert "DELETE /apis/resource.k8s.io/v1alpha3/namespaces/default/resourceclaims/pb-claim -> 200" in lines
