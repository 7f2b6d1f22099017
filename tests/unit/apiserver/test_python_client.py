"""The official ``kubernetes`` Python client against the HTTP layer (in-memory backend).

The client is synchronous, so it runs in a thread while the test's event loop
serves it.
"""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import dynamic, watch
from kubernetes.client import ApiClient, Configuration

from services.apiserver.http.auth import TokenAuthenticator
from services.apiserver.http.server import build_app, start

from .conftest import openapi_docs

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p1", "labels": {"a": "b"}},
    "spec": {"containers": [{"name": "c", "image": "x"}]},
}


def _api(port: int, scheme: str = "http", token: str | None = None, ca: str | None = None) -> ApiClient:
    cfg = Configuration()
    cfg.host = f"{scheme}://127.0.0.1:{port}"
    if token:
        cfg.api_key = {"authorization": f"Bearer {token}"}
    if ca:
        cfg.ssl_ca_cert = ca
    return ApiClient(cfg)


def _core_flow(port: int, watching: Callable[[], None]) -> list[str]:
    """The client's calls in order; ``watching()`` blocks until the server's watch has started."""
    api = _api(port)
    v1: Any = k8s.CoreV1Api(api)
    seen: list[str] = []
    v1.create_namespaced_pod("ns", POD)
    pods: Any = v1.list_namespaced_pod("ns", label_selector="a=b")
    seen.append(",".join(p.metadata.name for p in pods.items))

    def later() -> None:
        watching()  # the change must arrive through the watch, not the list before it
        v1.patch_namespaced_pod("p1", "ns", {"metadata": {"labels": {"c": "d"}}})

    threading.Thread(target=later).start()
    w = watch.Watch()
    for ev in w.stream(
        v1.list_namespaced_pod, "ns", resource_version=pods.metadata.resource_version, timeout_seconds=5
    ):
        seen.append(f"{ev['type']} {ev['object'].metadata.labels['c']}")
        w.stop()
    dc = dynamic.DynamicClient(api)
    claims = dc.resources.get(api_version="resource.k8s.io/v1alpha3", kind="ResourceClaim")
    body = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": "c1"},
        "spec": {"devices": {"requests": [{"name": "r", "deviceClassName": "gpu"}]}},
    }
    seen.append(claims.create(body=body, namespace="ns").metadata.name)
    patched = claims.patch(
        name="c1",
        namespace="ns",
        body={"metadata": {"labels": {"x": "1"}}},
        content_type="application/merge-patch+json",
    )
    seen.append(patched.metadata.labels["x"])
    claims.delete(name="c1", namespace="ns")
    try:
        claims.get(name="c1", namespace="ns")
    except Exception as exc:  # the dynamic client raises NotFoundError
        seen.append(type(exc).__name__)
    return seen


async def test_core_and_dynamic_clients(client: Any, backend: Any) -> None:
    loop = asyncio.get_running_loop()

    def watching() -> None:
        asyncio.run_coroutine_threadsafe(backend.wait_for_watches(1, timeout=10), loop).result()

    seen = await asyncio.to_thread(_core_flow, client.server.port, watching)
    assert seen == ["p1", "MODIFIED d", "c1", "1", "NotFoundError"]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
async def test_tls_and_token(tmp_path: Path, backend: Any) -> None:
    key, cert = tmp_path / "tls.key", tmp_path / "tls.crt"
    await asyncio.to_thread(
        subprocess.run,
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    app = build_app(backend, authenticator=TokenAuthenticator.from_text("tok,alice,1\n"), openapi=openapi_docs())
    runner, port = await start(app, port=0, certfile=str(cert), keyfile=str(key))
    try:

        def call(token: str | None) -> Any:
            return k8s.CoreV1Api(_api(port, "https", token, str(cert))).list_namespace()

        assert (await asyncio.to_thread(call, "tok")).kind == "NamespaceList"
        with pytest.raises(k8s.ApiException) as err:
            await asyncio.to_thread(call, None)
        assert err.value.status == 401
        ctx = ssl.create_default_context(cafile=str(cert))
        _reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx)
        writer.close()
    finally:
        await runner.cleanup()
