"""Fixtures: the HTTP app over the in-memory backend, and a client for it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from services.apiserver.http.server import build_app
from services.apiserver.openapi import OpenAPIDocuments

from .memory_backend import MemoryBackend

_OPENAPI: OpenAPIDocuments | None = None


def openapi_docs() -> OpenAPIDocuments:
    """Build the OpenAPI documents once per test session (they never change)."""
    global _OPENAPI
    if _OPENAPI is None:
        _OPENAPI = OpenAPIDocuments.build()
    return _OPENAPI


@pytest.fixture
def backend() -> MemoryBackend:
    return MemoryBackend()


AppFactory = Callable[..., "Any"]


@pytest.fixture
async def make_client(backend: MemoryBackend) -> AsyncIterator[Callable[..., Any]]:
    clients: list[TestClient[web.Request, web.Application]] = []

    async def make(**kwargs: Any) -> TestClient[web.Request, web.Application]:
        kwargs.setdefault("anonymous", True)
        kwargs.setdefault("openapi", openapi_docs())
        app = build_app(kwargs.pop("backend", backend), **kwargs)
        client: TestClient[web.Request, web.Application] = TestClient(TestServer(app, handler_cancellation=True))
        await client.start_server()
        clients.append(client)
        return client

    yield make
    for c in clients:
        await c.close()


@pytest.fixture
async def client(make_client: Callable[..., Any]) -> Any:
    return await make_client()
