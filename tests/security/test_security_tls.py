"""TLS for the API: HTTPS works for a client that trusts the CA, and nothing else gets an answer.

The apiserver serves HTTPS when given ``--tls-cert-file``/``--tls-private-key-file``
(`services.apiserver.certs.self_signed` makes a certificate that is its own
CA, as ``draplane up --tls`` does). A client with that CA talks HTTPS; one
without it refuses the certificate; plain HTTP to the TLS port gets no HTTP
answer at all; TLS older than 1.2 is refused.
"""

from __future__ import annotations

import asyncio
import ssl

import aiohttp
import pytest

from services.apiserver.http.server import ssl_context
from tests.security.apiservers import ADMIN, RunningApiserver, call

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_https_with_the_ca_works(secured: RunningApiserver) -> None:
    assert secured.url.startswith("https://") and secured.ca is not None
    async with secured.session(ADMIN) as session:
        reply = await call(session, "GET", "/api/v1/namespaces")
        assert reply.status == 200
        assert {ns["metadata"]["name"] for ns in reply.doc["items"]} >= {"default", "kube-system"}


async def test_a_client_without_the_ca_refuses_the_certificate(secured: RunningApiserver) -> None:
    connector = aiohttp.TCPConnector(ssl=ssl.create_default_context())  # the system's CAs only
    async with aiohttp.ClientSession(connector=connector) as session:
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await session.get(secured.url + "/healthz")


async def test_plain_http_to_the_tls_port_gets_no_http_answer(secured: RunningApiserver) -> None:
    http_url = secured.url.replace("https://", "http://")
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientError):
            async with session.get(http_url + "/healthz", headers={"Authorization": f"Bearer {ADMIN}"}) as resp:
                await resp.read()
    # The same on a raw socket: the server never answers in HTTP.
    port = int(secured.url.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"GET /api HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ADMIN}\r\n\r\n".encode())
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(1024), 10)
    finally:
        writer.close()
        await writer.wait_closed()
    assert not answer.startswith(b"HTTP/"), answer


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1_1 is deprecated:DeprecationWarning")
async def test_tls_older_than_1_2_is_refused(secured: RunningApiserver) -> None:
    assert secured.ca is not None
    served = ssl_context(str(secured.ca), str(secured.ca.with_suffix(".key")))
    assert served.minimum_version >= ssl.TLSVersion.TLSv1_2
    context = secured.ssl_context()
    assert context is not None
    context.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED
    context.maximum_version = ssl.TLSVersion.TLSv1_1
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context)) as session:
        with pytest.raises(aiohttp.ClientError):
            await session.get(secured.url + "/healthz")
