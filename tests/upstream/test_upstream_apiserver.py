"""ops/upstreamkit's etcd + kube-apiserver 1.31.14: the oracle the compatibility suite compares draplane with.

Started as `ops.upstreamkit.run.kube_apiserver` starts it for everyone: it
answers kubectl and the Python ``kubernetes`` client through the kubeconfig
it writes, reports its own version, and serves resource.k8s.io/v1alpha3 (the
DRA gate and runtime-config are on).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from kubernetes import client, config

from ops.upstreamkit.build import Target
from ops.upstreamkit.run import kube_apiserver
from ops.upstreamkit.versions import DEFAULT_KUBE_VERSION, ETCD, ETCD_VERSION
from tests.support.kubectl import Kubectl
from tests.support.upstream import UPSTREAM_TIMEOUT, require_upstream_async

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(UPSTREAM_TIMEOUT)]

NEEDS: tuple[Target, ...] = (("kube-apiserver", DEFAULT_KUBE_VERSION), (ETCD, ETCD_VERSION))


async def test_kube_apiserver_answers_kubectl_and_the_python_client_with_dra_on(tmp_path: Path) -> None:
    await require_upstream_async(NEEDS)
    async with kube_apiserver(tmp_path / "oracle") as api:
        kubectl = Kubectl(api.kubeconfig)
        version = json.loads((await kubectl("version", "-o", "json")).out)
        assert version["serverVersion"]["gitVersion"] == f"v{DEFAULT_KUBE_VERSION}"
        resources = (await kubectl("api-resources", "--api-group=resource.k8s.io", "-o", "name")).out.split()
        assert "resourceclaims.resource.k8s.io" in resources

        def namespaces() -> list[str]:
            with config.new_client_from_config(str(api.kubeconfig)) as api_client:
                return [ns.metadata.name for ns in client.CoreV1Api(api_client).list_namespace().items]

        assert "kube-system" in await asyncio.to_thread(namespaces)
    assert not api.apiserver.alive and not api.etcd.alive
