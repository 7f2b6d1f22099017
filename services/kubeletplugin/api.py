"""The node agent ↔ driver protocol: kubelet's DRA plugin API (``dra/v1alpha4``) as JSON messages.

Why this module exists: kubelet asks a DRA driver to prepare and unprepare
claims over gRPC (``NodePrepareResources``, ``NodeUnprepareResources``, each
with a batch of claims by UID, namespace and name, answered per claim UID
with devices or an error). draplane keeps those messages and their
semantics but carries them as one JSON document per line over a unix socket
(`services.kubeletplugin.unix_socket`), so the node agent and drivers can run in
one process or in separate containers sharing a state volume.

One extension: a claim reference may carry ``resourceVersion``, the last log
offset the node agent had seen. The driver's informer waits until it has
applied that offset before it reads the claim, so both read the same state
even though they consume the log independently. Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

PREPARE = "NodePrepareResources"
UNPREPARE = "NodeUnprepareResources"
METHODS = (PREPARE, UNPREPARE)
SOCKET_SUFFIX = ".sock"
MAX_MESSAGE_BYTES = 16 * 1024 * 1024


class ProtocolError(ValueError):
    """A message that does not follow the protocol."""


@dataclass(frozen=True, slots=True)
class ClaimRef:
    """``drapb.Claim``: which claim to (un)prepare, plus the log offset to read it at."""

    uid: str
    namespace: str
    name: str
    resource_version: str = ""

    def to_wire(self) -> dict[str, str]:
        wire = {"uid": self.uid, "namespace": self.namespace, "name": self.name}
        if self.resource_version:
            wire["resourceVersion"] = self.resource_version
        return wire

    @classmethod
    def from_wire(cls, raw: Any) -> ClaimRef:
        if not isinstance(raw, Mapping) or not raw.get("uid"):
            raise ProtocolError("a claim needs at least a uid")
        return cls(
            str(raw["uid"]),
            str(raw.get("namespace") or ""),
            str(raw.get("name") or ""),
            str(raw.get("resourceVersion") or ""),
        )


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    claims: tuple[ClaimRef, ...]


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """The answer for one claim: its prepared devices (wire form), or an error."""

    devices: tuple[dict[str, Any], ...] = ()
    error: str = ""


@dataclass(frozen=True, slots=True)
class Response:
    """Per-claim results by UID, or a general ``error`` about the whole request."""

    claims: dict[str, ClaimResult] = field(default_factory=dict)
    error: str = ""


def socket_path(state_dir: Path, driver: str) -> Path:
    """Where ``driver`` listens: ``<state>/plugins/<driver>.sock``."""
    return plugins_dir(state_dir) / f"{driver}{SOCKET_SUFFIX}"


def plugins_dir(state_dir: Path) -> Path:
    return state_dir / "plugins"


def driver_of_socket(name: str) -> str | None:
    """The driver name of a socket file name in the plugins directory, or None for other files."""
    return name[: -len(SOCKET_SUFFIX)] if name.endswith(SOCKET_SUFFIX) and len(name) > len(SOCKET_SUFFIX) else None


def encode_request(method: str, claims: Sequence[ClaimRef]) -> bytes:
    return orjson.dumps({"method": method, "claims": [c.to_wire() for c in claims]}) + b"\n"


def decode_request(line: bytes) -> Request:
    try:
        raw = orjson.loads(line)
    except orjson.JSONDecodeError as err:
        raise ProtocolError(f"malformed request: {err}") from None
    if not isinstance(raw, Mapping):
        raise ProtocolError("malformed request: not an object")
    method = raw.get("method")
    if method not in METHODS:
        raise ProtocolError(f"unknown method {method!r}")
    claims = raw.get("claims")
    if not isinstance(claims, list):
        raise ProtocolError("malformed request: claims must be a list")
    return Request(str(method), tuple(ClaimRef.from_wire(c) for c in claims))


def encode_response(response: Response) -> bytes:
    body: dict[str, Any] = {
        "claims": {
            uid: {"devices": list(result.devices), **({"error": result.error} if result.error else {})}
            for uid, result in response.claims.items()
        }
    }
    if response.error:
        body["error"] = response.error
    return orjson.dumps(body) + b"\n"


def decode_response(line: bytes) -> Response:
    try:
        raw = orjson.loads(line)
    except orjson.JSONDecodeError as err:
        raise ProtocolError(f"malformed response: {err}") from None
    if not isinstance(raw, Mapping):
        raise ProtocolError("malformed response: not an object")
    claims = {}
    for uid, result in (raw.get("claims") or {}).items():
        if not isinstance(result, Mapping):
            raise ProtocolError(f"malformed response for claim {uid}")
        claims[str(uid)] = ClaimResult(
            tuple(d for d in result.get("devices") or () if isinstance(d, dict)), str(result.get("error") or "")
        )
    return Response(claims, str(raw.get("error") or ""))
