"""/healthz, /livez and /readyz: unauthenticated; /readyz fails until the view has caught up."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz"])
async def test_health_paths_answer_ok_without_credentials(make_client: Callable[..., Any], path: str) -> None:
    client = await make_client(anonymous=False, ready=lambda: True)
    resp = await client.get(path)
    assert resp.status == 200
    assert await resp.text() == "ok"


async def test_readyz_fails_as_kube_apiserver_does_until_the_view_is_synced(make_client: Callable[..., Any]) -> None:
    synced = False
    client = await make_client(ready=lambda: synced)
    resp = await client.get("/readyz")
    assert resp.status == 500
    assert await resp.text() == "[-]informer-sync failed: reason withheld\nreadyz check failed\n"
    assert (await client.get("/livez")).status == 200  # alive all the same

    synced = True
    resp = await client.get("/readyz")
    assert resp.status == 200 and await resp.text() == "ok"
