"""The plugin socket: a driver serves `plugin_api` requests on a unix socket; the node agent calls it.

Why this module exists: kubelet reaches DRA drivers through sockets in its
plugins directory; draplane's node agent does the same with
``<state>/plugins/<driver>.sock`` and finds drivers by listing that
directory. One JSON document per line in each direction; a connection may
carry several requests. The same code path serves a driver in the node
agent's process (``draplane up``) and in another container sharing the state
volume (docker-compose).

Closing the server cancels requests still being handled, as killing the
driver process would, so tests can stop a driver in the middle of a prepare.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from services.kubeletplugin.api import (
    MAX_MESSAGE_BYTES,
    PREPARE,
    UNPREPARE,
    ClaimRef,
    ProtocolError,
    Request,
    Response,
    decode_request,
    decode_response,
    driver_of_socket,
    encode_request,
    encode_response,
    plugins_dir,
    socket_path,
)

log = logging.getLogger(__name__)

Handler = Callable[[Request], Awaitable[Response]]


class PluginUnavailable(Exception):
    """No driver of that name is registered, or its socket does not answer."""


class PluginServer:
    """Serves one driver's plugin API on a unix socket."""

    def __init__(self, path: Path, handler: Handler) -> None:
        self.path = path
        self.handler = handler
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._inode: int | None = None

    async def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a stale socket of a previous run
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.path), limit=MAX_MESSAGE_BYTES)
        self._inode = os.stat(self.path).st_ino

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        with contextlib.suppress(FileNotFoundError):
            if self._inode is not None and os.stat(self.path).st_ino == self._inode:
                self.path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            while True:
                try:
                    line = await reader.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    writer.write(encode_response(Response(error="request too large")))
                    break
                if not line:
                    break
                try:
                    request = decode_request(line)
                except ProtocolError as err:
                    response = Response(error=str(err))
                else:
                    response = await self.handler(request)
                writer.write(encode_response(response))
                await writer.drain()
        except (ConnectionError, BrokenPipeError):
            pass
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


IDLE_CONNECTIONS = 4  # connections a client keeps open between calls (as many as it ran at once, up to this)

Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class PluginClient:
    """Calls one driver's plugin socket, keeping its connections open between calls.

    Kubelet keeps one gRPC connection per plugin; here a connection carries one
    request at a time (the server answers a connection's requests in order), so
    the client keeps the connections of finished calls and hands an idle one to the
    next call, opening another only when all are busy. A kept connection whose
    driver went away (restarted: the socket was replaced) answers nothing; the call
    is then sent once more on a new connection (prepare and unprepare are
    idempotent, and the node agent would repeat the call anyway). A connection
    whose call timed out or was cancelled is closed, never reused: its answer may
    still come.
    """

    def __init__(self, driver: str, path: Path, *, timeout: float = 60.0) -> None:
        self.driver = driver
        self.path = path
        self.timeout = timeout
        self._idle: list[Connection] = []

    async def call(self, method: str, claims: Sequence[ClaimRef]) -> Response:
        request = encode_request(method, claims)
        while self._idle:
            connection = self._idle.pop()
            if connection[1].is_closing() or connection[0].at_eof():
                _close(connection)
                continue
            line = await self._exchange(connection, method, request, reused=True)
            if line:
                return decode_response(line)
        connection = await self._connect()
        line = await self._exchange(connection, method, request, reused=False)
        if not line:
            raise PluginUnavailable(f"{method} on {self.path}: the driver closed the connection")
        return decode_response(line)

    async def _connect(self) -> Connection:
        try:
            async with asyncio.timeout(self.timeout):
                return await asyncio.open_unix_connection(str(self.path), limit=MAX_MESSAGE_BYTES)
        except (OSError, TimeoutError) as err:
            raise PluginUnavailable(f"connect to {self.path}: {err}") from None

    async def _exchange(self, connection: Connection, method: str, request: bytes, *, reused: bool) -> bytes:
        """Send ``request`` and read its answer line; b"" when a kept connection turned out closed."""
        reader, writer = connection
        line = b""
        try:
            writer.write(request)
            await writer.drain()
            async with asyncio.timeout(self.timeout):
                line = await reader.readline()
        except (ConnectionError, BrokenPipeError) as err:
            if not reused:
                raise PluginUnavailable(f"{method} on {self.path}: {err or type(err).__name__}") from None
        except (OSError, TimeoutError) as err:
            raise PluginUnavailable(f"{method} on {self.path}: {err or type(err).__name__}") from None
        finally:
            if line.endswith(b"\n") and len(self._idle) < IDLE_CONNECTIONS:
                self._idle.append(connection)
            else:
                _close(connection)  # failed, cut short, or a partial answer: never reused
        return line

    def close(self) -> None:
        """Close the kept connections (the driver sees them end)."""
        while self._idle:
            _close(self._idle.pop())

    async def prepare(self, claims: Sequence[ClaimRef]) -> Response:
        return await self.call(PREPARE, claims)

    async def unprepare(self, claims: Sequence[ClaimRef]) -> Response:
        return await self.call(UNPREPARE, claims)


def _close(connection: Connection) -> None:
    connection[1].close()


def registered_drivers(state_dir: Path) -> dict[str, Path]:
    """Drivers with a socket in ``<state>/plugins``, by name (the node agent's plugin discovery)."""
    directory = plugins_dir(state_dir)
    if not directory.is_dir():
        return {}
    found = {}
    for entry in directory.iterdir():
        driver = driver_of_socket(entry.name)
        if driver is not None and entry.is_socket():
            found[driver] = entry
    return found


class PluginClients:
    """The node agent's clients, one per registered driver, kept (with their connections) between calls."""

    def __init__(self, state_dir: Path, *, timeout: float = 60.0) -> None:
        self.state_dir = state_dir
        self.timeout = timeout
        self._clients: dict[str, PluginClient] = {}

    def get(self, driver: str) -> PluginClient:
        """The client for ``driver``, or `PluginUnavailable` with kubelet's message when it is not registered."""
        path = socket_path(self.state_dir, driver)
        if not path.is_socket():
            stale = self._clients.pop(driver, None)
            if stale is not None:
                stale.close()
            raise PluginUnavailable(f"plugin name {driver} not found in the list of registered DRA plugins")
        client = self._clients.get(driver)
        if client is None:
            client = self._clients[driver] = PluginClient(driver, path, timeout=self.timeout)
        return client

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()


__all__ = [
    "PREPARE",
    "UNPREPARE",
    "PluginClient",
    "PluginClients",
    "PluginServer",
    "PluginUnavailable",
    "registered_drivers",
]
