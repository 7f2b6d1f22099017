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


class PluginClient:
    """Calls one driver's plugin socket (one connection per call)."""

    def __init__(self, driver: str, path: Path, *, timeout: float = 60.0) -> None:
        self.driver = driver
        self.path = path
        self.timeout = timeout

    async def call(self, method: str, claims: Sequence[ClaimRef]) -> Response:
        try:
            async with asyncio.timeout(self.timeout):
                reader, writer = await asyncio.open_unix_connection(str(self.path), limit=MAX_MESSAGE_BYTES)
        except (OSError, TimeoutError) as err:
            raise PluginUnavailable(f"connect to {self.path}: {err}") from None
        try:
            writer.write(encode_request(method, claims))
            await writer.drain()
            async with asyncio.timeout(self.timeout):
                line = await reader.readline()
        except (OSError, TimeoutError) as err:
            raise PluginUnavailable(f"{method} on {self.path}: {err or type(err).__name__}") from None
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        if not line:
            raise PluginUnavailable(f"{method} on {self.path}: the driver closed the connection")
        return decode_response(line)

    async def prepare(self, claims: Sequence[ClaimRef]) -> Response:
        return await self.call(PREPARE, claims)

    async def unprepare(self, claims: Sequence[ClaimRef]) -> Response:
        return await self.call(UNPREPARE, claims)


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


def client_for(state_dir: Path, driver: str, *, timeout: float = 60.0) -> PluginClient:
    """A client for ``driver``, or `PluginUnavailable` with kubelet's message when it is not registered."""
    path = socket_path(state_dir, driver)
    if not path.is_socket():
        raise PluginUnavailable(f"plugin name {driver} not found in the list of registered DRA plugins")
    return PluginClient(driver, path, timeout=timeout)


__all__ = [
    "PREPARE",
    "UNPREPARE",
    "PluginClient",
    "PluginServer",
    "PluginUnavailable",
    "client_for",
    "registered_drivers",
]
