"""A running apiserver (with its committer) on each backend, shared by a test module.

The stack is the real one: HTTP layer, materialized view, committer, admission
and the log — embedded SQLite or the real Kafka broker from ``ops/test``.
Clients authenticate with a bearer token of a ``system:masters`` user.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from services.apiserver.certs import self_signed
from services.apiserver.http.auth import TokenAuthenticator
from services.apiserver.kubeconfig import write_kubeconfig
from services.apiserver.service import Apiserver, ApiserverConfig
from tests.support.kubectl import Kubectl

ADMIN_TOKEN = "admin-token-" + uuid.uuid4().hex


@dataclass
class Stack:
    backend: str
    server: Apiserver
    url: str
    kubeconfig: Path
    kubectl: Kubectl
    ca_cert: Path
    token: str


@pytest_asyncio.fixture(
    scope="module",
    loop_scope="module",
    params=["embedded", pytest.param("kafka", marks=pytest.mark.kafka)],
)
async def stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    root = tmp_path_factory.mktemp(f"stack-{request.param}")
    if request.param == "kafka":
        servers = request.getfixturevalue("kafka_bootstrap")
        bus = f"kafka://{servers}?prefix=e2e{uuid.uuid4().hex[:10]}-"
    else:
        bus = f"sqlite://{root / 'bus.db'}"
    tokens = root / "tokens.csv"
    tokens.write_text(f'{ADMIN_TOKEN},admin,uid-admin,"system:masters"\n')
    # kubectl sends bearer tokens only over TLS, as with a real cluster.
    cert, key = self_signed(root / "pki")
    server = Apiserver(
        ApiserverConfig(
            bus_url=bus,
            data_dir=root / "apiserver",
            port=0,
            authenticator=TokenAuthenticator.from_file(tokens),
            certfile=str(cert),
            keyfile=str(key),
        )
    )
    await server.start()
    try:
        await server.wait_ready()
        assert server.committer is not None
        await asyncio.wait_for(server.committer.is_leader.wait(), 60)
        url = f"https://127.0.0.1:{server.port}"
        kubeconfig = write_kubeconfig(root / "kubeconfig", url, token=ADMIN_TOKEN, ca_file=cert)
        yield Stack(request.param, server, url, kubeconfig, Kubectl(kubeconfig), cert, ADMIN_TOKEN)
    finally:
        await server.stop()
