"""A real apiserver (REST layer, view, committer, admission, log) with the settings a test chooses.

The security tests start several, each with its own token file, anonymous
switch, TLS and limits; the fuzz suite starts one on the embedded log. The
server runs in the test's event loop, so tests reach it with aiohttp.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from services.api.admission.chain import AdmissionChain
from services.apiserver.certs import self_signed
from services.apiserver.http.auth import TokenAuthenticator
from services.apiserver.service import Apiserver, ApiserverConfig

# The token file an operator writes for ``--token-auth-file``: an admin in
# system:masters, a user without write rights, a user who gets them only
# through the file's group column, and two node identities.
ADMIN = "admin-token-0c9e"
ALICE = "alice-token-5b21"  # groups dev and ops: may read, not write
CAROL = "carol-token-77fa"  # system:masters only through the file's group column
NODE_A = "node-a-token-1d3c"
NODE_B = "node-b-token-9e48"
TOKENS = (
    f'{ADMIN},admin,uid-admin,"system:masters"\n'
    f'{ALICE},alice,uid-alice,"dev,ops"\n'
    f'{CAROL},carol,uid-carol,"dev,system:masters"\n'
    f'{NODE_A},system:node:node-a,uid-node-a,"system:nodes"\n'
    f'{NODE_B},system:node:node-b,uid-node-b,"system:nodes"\n'
)
MAX_BODY_BYTES = 64 * 1024
MAX_WATCHES = 3


@dataclass
class Reply:
    status: int
    doc: Any
    headers: Any


async def call(
    session: aiohttp.ClientSession,
    method: str,
    path: str,
    body: Any = None,
    *,
    content_type: str = "application/json",
) -> Reply:
    """One request; the body is encoded as JSON unless it is bytes already."""
    data = body if isinstance(body, bytes) or body is None else orjson.dumps(body)
    headers = {"Content-Type": content_type} if data is not None else {}
    async with session.request(method, path, data=data, headers=headers) as resp:
        raw = await resp.read()
        return Reply(resp.status, orjson.loads(raw) if raw else None, resp.headers)


def assert_status(reply: Reply, code: int, reason: str, message: str | None = None) -> None:
    """``reply`` is a Kubernetes Status with this code, reason (and message, when given)."""
    doc = reply.doc
    assert reply.status == code, doc
    assert isinstance(doc, dict) and doc["kind"] == "Status" and doc["status"] == "Failure", doc
    assert (doc["code"], doc["reason"]) == (code, reason), doc
    if message is not None:
        assert doc["message"] == message


@dataclass
class RunningApiserver:
    server: Apiserver
    url: str
    ca: Path | None  # the serving certificate (its own CA) when TLS is on

    def ssl_context(self) -> ssl.SSLContext | None:
        return None if self.ca is None else ssl.create_default_context(cafile=str(self.ca))

    def session(self, token: str | None = None, *, timeout: float = 60.0) -> aiohttp.ClientSession:
        """An HTTP session to this server, trusting its CA and sending ``token`` when given."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        context = self.ssl_context()
        connector = aiohttp.TCPConnector(ssl=context if context is not None else False, limit=0)
        return aiohttp.ClientSession(
            base_url=self.url,
            headers=headers,
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=timeout),
        )


def _prepare(
    root: Path, *, tokens: str | None, tls: bool
) -> tuple[TokenAuthenticator | None, Path | None, Path | None]:
    """The token file (written as an operator would) and the serving certificate."""
    root.mkdir(parents=True, exist_ok=True)
    authenticator = None
    if tokens is not None:
        (root / "tokens.csv").write_text(tokens)
        authenticator = TokenAuthenticator.from_file(root / "tokens.csv")
    cert = key = None
    if tls:
        cert, key = self_signed(root / "pki")
    return authenticator, cert, key


@contextlib.asynccontextmanager
async def running_apiserver(
    root: Path,
    *,
    bus_url: str | None = None,
    tokens: str | None = None,
    anonymous: bool = False,
    tls: bool = False,
    max_body_bytes: int = 3 * 1024 * 1024,
    max_watches_per_user: int = 64,
    admission: AdmissionChain | None = None,
) -> AsyncIterator[RunningApiserver]:
    """Start an apiserver in ``root`` (embedded log there unless ``bus_url``) and wait until it leads."""
    authenticator, cert, key = _prepare(root, tokens=tokens, tls=tls)
    server = Apiserver(
        ApiserverConfig(
            bus_url=bus_url or f"sqlite://{root / 'bus.db'}",
            data_dir=root / "apiserver",
            port=0,
            authenticator=authenticator,
            anonymous=anonymous,
            certfile=str(cert) if cert else None,
            keyfile=str(key) if key else None,
            max_body_bytes=max_body_bytes,
            max_watches_per_user=max_watches_per_user,
            admission=admission,
        )
    )
    await server.start()
    try:
        await server.wait_ready()
        assert server.committer is not None
        await asyncio.wait_for(server.committer.is_leader.wait(), 60)
        scheme = "https" if tls else "http"
        yield RunningApiserver(server, f"{scheme}://127.0.0.1:{server.port}", cert)
    finally:
        await server.stop()
