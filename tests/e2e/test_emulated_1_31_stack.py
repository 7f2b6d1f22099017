"""A stack at ``--emulated-version=1.31`` (the seeds' release) beside the default 1.37 one, through HTTP.

At 1.31 ``/version`` says so; the gates 1.32 to 1.37 added are pre-alpha, so a
v1 claim's tolerations (DRADeviceTaints) are dropped on create; and there is no
admin-access namespace label rule (``DRAAdminAccess=true`` with the 1.32
semantics). At 1.37 (tests/e2e/test_admin_access_namespace_stack.py) the
tolerations are kept and the label is needed.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from services.apiserver.service import Apiserver, ApiserverConfig
from services.kube.emulated_version import parse_emulated_version
from services.kube.feature_gates import FeatureGates

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

TOLERATION = {"key": "example.com/broken", "operator": "Exists", "effect": "NoSchedule"}


def claim(ns: str, name: str, **exactly: Any) -> dict[str, Any]:
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", **exactly}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"devices": {"requests": [request]}},
    }


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["1.31", "1.37"])
async def api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[str, str]]:
    release = parse_emulated_version(request.param)
    gates = FeatureGates.parse("DRAAdminAccess=true", release=release)
    root: Path = tmp_path_factory.mktemp(f"emulated-{release}")
    server = Apiserver(
        ApiserverConfig(
            bus_url=f"sqlite://{root / 'bus.db'}", data_dir=root / "apiserver", port=0, anonymous=True, gates=gates
        )
    )
    await server.start()
    try:
        await server.wait_ready()
        yield release, f"http://127.0.0.1:{server.port}"
    finally:
        await server.stop()


async def test_version_gates_and_admin_rule_follow_the_release(api: tuple[str, str]) -> None:
    release, url = api
    ns = f"ev-{uuid.uuid4().hex[:8]}"
    async with aiohttp.ClientSession(base_url=url) as http:
        version = await (await http.get("/version")).json()
        assert version["gitVersion"] == f"v{release}.0-draplane"
        assert version["emulationMinor"] == release.split(".")[1]

        r = await http.post(
            "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        )
        assert r.status == 201, await r.text()
        claims = f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims"

        r = await http.post(claims, json=claim(ns, "tolerant", tolerations=[TOLERATION]))
        assert r.status == 201, await r.text()
        exactly = (await r.json())["spec"]["devices"]["requests"][0]["exactly"]
        if release == "1.31":
            assert "tolerations" not in exactly  # DRADeviceTaints is pre-alpha at 1.31
        else:
            assert exactly["tolerations"] == [TOLERATION]

        r = await http.post(claims, json=claim(ns, "admin", adminAccess=True))
        if release == "1.31":
            assert r.status == 201, await r.text()  # no namespace label rule at 1.31
            assert (await r.json())["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] is True
        else:
            assert r.status == 422
            assert (await r.json())["details"]["causes"][0]["field"] == "spec.devices.requests[0].adminAccess"
