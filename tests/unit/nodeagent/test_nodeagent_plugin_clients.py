"""The node agent's plugin clients keep their connections between calls (as kubelet keeps its gRPC one)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from services.kubeletplugin.api import PREPARE, ClaimRef, ClaimResult, Request, Response, socket_path
from services.kubeletplugin.unix_socket import PluginClients, PluginServer, PluginUnavailable

DRIVER = "gpu.example.com"
CLAIM = ClaimRef("uid-1", "default", "claim-1")


class Driver:
    """A plugin server that counts the connections it was given and can hold its answers."""

    def __init__(self, path: Path) -> None:
        self.connections = 0
        self.requests: list[Request] = []
        self.hold: asyncio.Event | None = None
        self.two_in = asyncio.Event()  # two requests are being handled
        self.server = PluginServer(path, self.handle)
        serve = self.server._serve

        async def counted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            await serve(reader, writer)

        self.server._serve = counted  # type: ignore[method-assign]

    async def handle(self, request: Request) -> Response:
        self.requests.append(request)
        if len(self.requests) == 2:
            self.two_in.set()
        if self.hold is not None:
            await self.hold.wait()
        return Response(claims={c.uid: ClaimResult() for c in request.claims})


@pytest.fixture
async def driver(tmp_path: Path):  # type: ignore[no-untyped-def]
    d = Driver(socket_path(tmp_path, DRIVER))
    await d.server.start()
    yield d
    await d.server.close()


async def test_calls_in_turn_share_one_connection(tmp_path: Path, driver: Driver) -> None:
    clients = PluginClients(tmp_path, timeout=5)
    try:
        for _ in range(3):
            response = await clients.get(DRIVER).prepare([CLAIM])
            assert "uid-1" in response.claims
        assert driver.connections == 1
        assert [r.method for r in driver.requests] == [PREPARE] * 3
    finally:
        clients.close()


async def test_calls_at_once_each_get_a_connection(tmp_path: Path, driver: Driver) -> None:
    clients = PluginClients(tmp_path, timeout=5)
    driver.hold = asyncio.Event()
    try:
        calls = [asyncio.create_task(clients.get(DRIVER).prepare([CLAIM])) for _ in range(2)]
        await asyncio.wait_for(driver.two_in.wait(), 5)  # both reach the driver while neither is answered
        driver.hold.set()
        await asyncio.gather(*calls)
        assert driver.connections == 2
        await clients.get(DRIVER).prepare([CLAIM])  # a kept one serves the next call
        assert driver.connections == 2
    finally:
        clients.close()


async def test_a_restarted_driver_is_called_on_a_new_connection(tmp_path: Path, driver: Driver) -> None:
    clients = PluginClients(tmp_path, timeout=5)
    try:
        await clients.get(DRIVER).prepare([CLAIM])
        await driver.server.close()  # the kept connection ends with it
        restarted = Driver(socket_path(tmp_path, DRIVER))
        await restarted.server.start()
        try:
            response = await clients.get(DRIVER).prepare([CLAIM])
            assert "uid-1" in response.claims
            assert restarted.connections == 1
            assert len(restarted.requests) == 1
        finally:
            await restarted.server.close()
    finally:
        clients.close()


async def test_an_unregistered_driver_is_kubelets_error(tmp_path: Path) -> None:
    clients = PluginClients(tmp_path, timeout=5)
    with pytest.raises(PluginUnavailable, match="not found in the list of registered DRA plugins"):
        clients.get(DRIVER)


async def test_a_call_that_timed_out_does_not_leave_its_connection_to_the_next(tmp_path: Path, driver: Driver) -> None:
    clients = PluginClients(tmp_path, timeout=0.2)
    driver.hold = asyncio.Event()
    try:
        with pytest.raises(PluginUnavailable):
            await clients.get(DRIVER).prepare([CLAIM])
        driver.hold.set()  # the late answer goes to the closed connection, not to the next call
        await clients.get(DRIVER).prepare([ClaimRef("uid-2", "default", "claim-2")])
        assert driver.connections == 2
    finally:
        clients.close()
