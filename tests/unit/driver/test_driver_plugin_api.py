"""The plugin API messages between the node agent and drivers."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.kubeletplugin.api import (
    PREPARE,
    UNPREPARE,
    ClaimRef,
    ClaimResult,
    ProtocolError,
    Response,
    decode_request,
    decode_response,
    driver_of_socket,
    encode_request,
    encode_response,
    socket_path,
)


def test_request_round_trip() -> None:
    refs = [ClaimRef("u1", "ns", "c1", "42"), ClaimRef("u2", "ns", "c2")]
    line = encode_request(PREPARE, refs)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    request = decode_request(line)
    assert request.method == PREPARE and request.claims == tuple(refs)


def test_response_round_trip() -> None:
    device = {"requestNames": ["gpu"], "poolName": "n", "deviceName": "gpu-0", "cdiDeviceIDs": ["k/c=x"]}
    response = Response({"u1": ClaimResult((device,)), "u2": ClaimResult(error="boom")})
    assert decode_response(encode_response(response)) == response
    assert decode_response(encode_response(Response(error="general"))).error == "general"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"{", "malformed request"),
        (b"[]", "not an object"),
        (b'{"method": "Explode", "claims": []}', "unknown method"),
        (b'{"method": "NodeUnprepareResources", "claims": {}}', "claims must be a list"),
        (b'{"method": "NodeUnprepareResources", "claims": [{"name": "x"}]}', "needs at least a uid"),
    ],
)
def test_malformed_requests(line: bytes, message: str) -> None:
    with pytest.raises(ProtocolError) as err:
        decode_request(line)
    assert message in str(err.value)
    assert UNPREPARE != PREPARE


def test_socket_paths_and_discovery_names() -> None:
    assert socket_path(Path("/state"), "gpu.example.com") == Path("/state/plugins/gpu.example.com.sock")
    assert driver_of_socket("gpu.example.com.sock") == "gpu.example.com"
    assert driver_of_socket("checkpoint.db") is None
    assert driver_of_socket(".sock") is None
