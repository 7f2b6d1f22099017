"""Resource limits per request and per client: request body size (413) and concurrent watches (429).

The secured server runs with ``max_body_bytes`` = `MAX_BODY_BYTES` and
``max_watches_per_user`` = `MAX_WATCHES` (``--max-request-bytes`` and
``--max-watches-per-user`` of ``draplane apiserver``):
- a body above the limit is refused with Kubernetes' 413 Status, whether it
  announces its length or streams in chunks, on every write verb, and
  nothing is written; a body under the limit is served;
- a user holding the maximum of watch streams gets 429 TooManyRequests with
  ``Retry-After`` for one more, while other users and plain reads are not
  affected; closing a watch, or a watch ending on its own, frees its slot.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest

from tests.security.apiservers import (
    ADMIN,
    ALICE,
    CAROL,
    MAX_BODY_BYTES,
    MAX_WATCHES,
    RunningApiserver,
    assert_status,
    call,
)
from tests.support.eventually import eventually

pytestmark = pytest.mark.asyncio(loop_scope="module")

CLAIMS = "/apis/resource.k8s.io/v1alpha3/namespaces/default/resourceclaims"
TOO_LARGE = f"Request entity too large: limit is {MAX_BODY_BYTES}"


def claim_of_size(name: str, size: int) -> bytes:
    """A valid ResourceClaim whose JSON is exactly ``size`` bytes (padded with an annotation)."""
    doc: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "annotations": {"example.com/pad": ""}},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
    }
    doc["metadata"]["annotations"]["example.com/pad"] = "x" * (size - len(orjson.dumps(doc)))
    body = orjson.dumps(doc)
    assert len(body) == size
    return body


async def test_a_body_above_the_limit_is_413_with_kubernetes_status(secured: RunningApiserver) -> None:
    async with secured.session(ADMIN) as admin:
        fits = await call(admin, "POST", CLAIMS, claim_of_size("fits", MAX_BODY_BYTES))
        assert fits.status == 201, fits.doc
        too_big = claim_of_size("too-big", MAX_BODY_BYTES + 1)
        assert_status(await call(admin, "POST", CLAIMS, too_big), 413, "RequestEntityTooLarge", TOO_LARGE)
        assert_status(await call(admin, "PUT", f"{CLAIMS}/fits", too_big), 413, "RequestEntityTooLarge", TOO_LARGE)
        assert_status(
            await call(admin, "PATCH", f"{CLAIMS}/fits", too_big, content_type="application/merge-patch+json"),
            413,
            "RequestEntityTooLarge",
            TOO_LARGE,
        )

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the limit applies while reading
            body = claim_of_size("streamed", 4 * MAX_BODY_BYTES)
            for i in range(0, len(body), 8192):
                yield body[i : i + 8192]

        async with admin.post(CLAIMS, data=chunks(), headers={"Content-Type": "application/json"}) as resp:
            assert resp.status == 413
            doc = orjson.loads(await resp.read())
        assert (doc["reason"], doc["message"]) == ("RequestEntityTooLarge", TOO_LARGE)
        for name in ("too-big", "streamed"):
            assert (await call(admin, "GET", f"{CLAIMS}/{name}")).status == 404
        assert (await call(admin, "GET", f"{CLAIMS}/fits")).doc["metadata"]["annotations"]["example.com/pad"]


WATCH_PATHS = [
    "/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=300",
    "/api/v1/nodes?watch=1&timeoutSeconds=300",
    f"{CLAIMS}?watch=1&timeoutSeconds=300",
    "/apis/resource.k8s.io/v1alpha3/resourceslices?watch=1&timeoutSeconds=300",
]


async def _open(session: aiohttp.ClientSession, path: str) -> aiohttp.ClientResponse:
    """A watch request whose headers have arrived (the stream stays open)."""
    return await session.get(path)


async def _eventually_opens(session: aiohttp.ClientSession, path: str) -> aiohttp.ClientResponse:
    """Open a watch, retrying while the server still counts a stream the client has closed.

    Nothing announces that the server has noticed a closed connection, so this
    polls, with a deadline, instead of sleeping a fixed time.
    """

    async def opened() -> aiohttp.ClientResponse | None:
        resp = await _open(session, path)
        if resp.status == 200:
            return resp
        assert resp.status == 429
        resp.release()
        return None

    return await eventually(opened, timeout=10, interval=0.05, what=f"a free watch slot for {path}")


async def test_watches_per_user_are_limited_and_a_closed_watch_frees_its_slot(secured: RunningApiserver) -> None:
    async with secured.session(ALICE) as alice, secured.session(ADMIN) as admin:
        with contextlib.ExitStack() as open_streams:
            streams = []
            for path in WATCH_PATHS[:MAX_WATCHES]:
                resp = await _open(alice, path)
                open_streams.callback(resp.close)
                assert resp.status == 200
                streams.append(resp)

            async with alice.get(WATCH_PATHS[MAX_WATCHES]) as refused:
                assert refused.status == 429
                assert refused.headers["Retry-After"] == "1"
                doc = orjson.loads(await refused.read())
            assert doc["kind"] == "Status" and doc["code"] == 429
            assert (doc["reason"], doc["message"]) == ("TooManyRequests", "Too many requests, please try again later.")
            assert doc["details"]["retryAfterSeconds"] == 1

            # The limit is per user, and only for watches.
            theirs = await _open(admin, WATCH_PATHS[0])
            open_streams.callback(theirs.close)
            assert theirs.status == 200
            assert (await call(alice, "GET", CLAIMS)).status == 200

            # Closing one stream frees its slot.
            streams.pop().close()
            again = await _eventually_opens(alice, WATCH_PATHS[MAX_WATCHES])
            open_streams.callback(again.close)
            assert again.status == 200


async def test_a_watch_that_ends_frees_its_slot(secured: RunningApiserver) -> None:
    async with secured.session(CAROL) as carol:
        for round_ in range(2):  # twice the limit in total, never more than the limit at once
            ended = []
            for path in WATCH_PATHS[:MAX_WATCHES]:
                resp = await _eventually_opens(carol, path.replace("timeoutSeconds=300", "timeoutSeconds=1"))
                assert resp.status == 200, round_
                ended.append(resp)
            for resp in ended:
                await resp.read()  # the server ends the stream after timeoutSeconds
                resp.release()
