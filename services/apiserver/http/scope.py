"""What every verb handler needs about one request, in one place.

A `Scope` bundles the parsed route, the caller, the negotiated output and the
server settings, and offers the small steps handlers share: reading a bounded
body, reading query options the Kubernetes way, building a write `Request` for
the committer and writing the response. Handlers stay short (kine-style, one
verb per module) because the plumbing lives here.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web
from multidict import MultiMapping

from services.api.machinery.conversion import from_storage
from services.api.machinery.status import StatusError, request_too_large, too_large_for_the_log
from services.api.types import registry
from services.api.types.registry import ResourceType
from services.apiserver import tables
from services.apiserver.backend import Backend, WriteResult
from services.apiserver.encoded_objects import Encoded, EncodedObjects
from services.apiserver.http.auth import WatchLimiter
from services.apiserver.http.errors import invalid_options
from services.apiserver.http.negotiation import Output, decode_body, encode, protobuf_codec
from services.apiserver.http.routing import ResourceRoute
from services.bus.port import RecordTooLarge
from topics.envelope import Op, Request, UserInfo

_TRUE = frozenset({"1", "t", "T", "true", "TRUE", "True"})
_FALSE = frozenset({"0", "f", "F", "false", "FALSE", "False"})
FIELD_VALIDATION = ("Ignore", "Warn", "Strict")


@dataclass(slots=True)
class Settings:
    """Server-wide knobs every handler reads."""

    max_body_bytes: int = 3 * 1024 * 1024
    write_timeout: float = 60.0
    min_watch_timeout: float = 1800.0  # kube-apiserver --min-request-timeout
    watch_limiter: WatchLimiter = field(default_factory=lambda: WatchLimiter(64))
    encodings: EncodedObjects = field(default_factory=EncodedObjects)  # one encoding per object version


@dataclass(slots=True)
class Scope:
    backend: Backend
    route: ResourceRoute
    user: UserInfo
    request: web.Request
    output: Output
    settings: Settings
    warnings: list[str] = field(default_factory=list)

    # ---------------------------------------------------------------- query

    @property
    def stored_rt(self) -> ResourceType:
        """The row whose storage the URL's resource uses (core Events for events.k8s.io's)."""
        return registry.storage_of(self.route.rt)

    @property
    def query(self) -> MultiMapping[str]:
        return self.request.query

    def bool_param(self, name: str, default: bool = False) -> bool:
        value = self.query.get(name)
        if value is None or value == "":
            return default
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise StatusError(
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": f'strconv.ParseBool: parsing "{value}": invalid syntax',
                "reason": "BadRequest",
                "code": 400,
            }
        )

    def int_param(self, name: str) -> int | None:
        value = self.query.get(name)
        if value is None or value == "":
            return None
        try:
            return int(value)
        except ValueError:
            raise StatusError(
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Failure",
                    "message": f'strconv.ParseInt: parsing "{value}": invalid syntax',
                    "reason": "BadRequest",
                    "code": 400,
                }
            ) from None

    def dry_run(self, kind: str, values: list[str] | None = None) -> list[str]:
        values = self.query.getall("dryRun", []) if values is None else values
        bad = [v for v in values if v != "All"]
        if bad:
            rendered = "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"
            raise invalid_options(kind, [f'dryRun: Unsupported value: {rendered}: supported values: "All"'])
        return list(values)

    def field_validation(self, kind: str) -> str:
        value = self.query.get("fieldValidation", "") or "Warn"
        if value not in FIELD_VALIDATION:
            raise invalid_options(
                kind,
                [f'fieldValidation: Unsupported value: "{value}": supported values: "Ignore", "Strict", "Warn"'],
            )
        return value

    def field_manager(self, kind: str, *, required: bool = False) -> str:
        manager = self.query.get("fieldManager", "")
        if not manager:
            if required:
                raise invalid_options(kind, ["fieldManager: Required value: is required for apply patch"])
            manager = manager_from_user_agent(self.request.headers.get("User-Agent", ""))
        elif len(manager) > 128:
            raise invalid_options(
                kind, [f'fieldManager: Invalid value: "{manager}": must be no more than 128 characters']
            )
        return manager

    # ---------------------------------------------------------------- body

    async def body(self) -> bytes:
        limit = self.settings.max_body_bytes
        length = self.request.content_length
        if length is not None and length > limit:
            raise request_too_large(limit)
        chunks: list[bytes] = []
        size = 0
        async for chunk in self.request.content.iter_chunked(65536):
            size += len(chunk)
            if size > limit:
                raise request_too_large(limit)
            chunks.append(chunk)
        return b"".join(chunks)

    async def body_object(self) -> tuple[bytes, Any]:
        raw = await self.body()
        if not raw.strip():
            raise StatusError(
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Failure",
                    "message": "the body of the request was empty",
                    "reason": "BadRequest",
                    "code": 400,
                }
            )
        kind = "Binding" if self.route.subresource == "binding" else self.route.rt.kind
        return raw, decode_body(raw, self.request.headers.get("Content-Type"), kind=kind)

    # ---------------------------------------------------------------- writes

    def new_request(
        self,
        op: Op,
        *,
        name: str,
        namespace: str | None = None,
        obj: dict[str, Any] | None = None,
        patch: Any = None,
        patch_type: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> Request:
        rt = self.stored_rt
        opts = dict(options or {})
        if self.route.subresource:
            opts["subresource"] = self.route.subresource
        return Request(
            id=str(uuid.uuid4()),
            op=op,
            group=rt.group,
            resource=rt.plural,
            namespace=(self.route.namespace if namespace is None else namespace) or "",
            name=name,
            user=self.user,
            reply_to="",
            object=obj,
            patch=patch,
            patch_type=patch_type,
            options=opts,
            version=registry.qualified_version(self.route.rt, self.route.version),
        )

    def request_timeout(self) -> float:
        """The write deadline: the server's, shortened by a ``?timeout=`` (Go duration) if given."""
        limit = self.settings.write_timeout
        asked = parse_duration(self.query.get("timeout", ""))
        return min(limit, asked) if asked else limit

    async def write(self, request: Request) -> WriteResult:
        try:
            async with asyncio.timeout(self.request_timeout()):
                result = await self.backend.write(request)
        except RecordTooLarge:  # the request itself does not fit in a record of `requests`
            raise too_large_for_the_log() from None
        # Forward-compatible: a backend whose replies carry warnings (fieldValidation=Warn
        # on patches, found by the committer) gets them to the client as headers.
        for warning in getattr(result, "warnings", None) or ():
            if warning not in self.warnings:
                self.warnings.append(str(warning))
        return result

    # ---------------------------------------------------------------- responses

    def present(self, obj: dict[str, Any]) -> dict[str, Any]:
        """A stored object in the version of the URL (itself when that is the storage version)."""
        rt, stored = self.route.rt, self.stored_rt
        version = registry.qualified_version(rt, self.route.version)
        if version == stored.version or obj.get("kind") != rt.kind:
            return obj
        return from_storage(obj, group=stored.group, kind=stored.kind, version=version)

    def present_all(self, objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Stored objects in the version of the URL (a list's items)."""
        rt = self.route.rt
        if (self.route.version == rt.version and rt.view_of is None) or self.output.shape == "partial":
            return objs
        return [self.present(o) for o in objs]

    def shape(self, obj: dict[str, Any]) -> dict[str, Any]:
        """One object as the client asked for it: itself (in the URL's version), a Table or its metadata."""
        if self.output.shape == "partial" and obj.get("kind") != "Status":
            return tables.partial_metadata(obj)
        obj = self.present(obj)
        if self.output.shape == "table" and obj.get("kind") != "Status":
            rv = str((obj.get("metadata") or {}).get("resourceVersion", ""))
            return tables.table(self.route.rt, [obj], resource_version=rv, include_object=self.output.include_object)
        return obj

    def encoded(self, obj: dict[str, Any]) -> Encoded | None:
        """A stored object as `shape` gives it, encoded once per object version (`Settings.encodings`).

        None when the answer is not one to keep: YAML, pretty JSON, Tables, and anything that is not a stored
        object of the URL's resource with a resourceVersion (a Status, a dry-run answer).
        """
        output = self.output
        fmt, shape = output.format, output.shape
        if fmt == "yaml" or shape not in ("object", "partial") or (fmt == "json" and self.query.get("pretty") in _TRUE):
            return None
        stored = self.stored_rt
        meta = obj.get("metadata")
        if obj.get("kind") != stored.kind or not isinstance(meta, dict):
            return None
        rv = meta.get("resourceVersion")
        if not rv or not isinstance(rv, str):
            return None
        route = self.route
        key = (
            route.rt.group,
            route.version,
            stored.group,
            stored.plural,
            meta.get("namespace") or "",
            str(meta.get("name") or ""),
            rv,
            shape,
            fmt,
        )

        def make() -> Encoded:
            shaped = tables.partial_metadata(obj) if shape == "partial" else self.present(obj)
            data = orjson.dumps(shaped) if fmt == "json" else protobuf_codec().encode_message(shaped)
            return Encoded(shaped["apiVersion"], shaped["kind"], data)

        return self.settings.encodings.get(key, make)

    def body_of(self, encoded: Encoded) -> bytes:
        """An `encoded` object as a response body: its JSON, or its message in protobuf's envelope."""
        if self.output.format == "protobuf":
            out: bytes = protobuf_codec().enveloped(encoded.data, api_version=encoded.api_version, kind=encoded.kind)
            return out
        return encoded.data

    def respond(self, doc: Any, status: int = 200) -> web.Response:
        if self.output.format == "json" and self.query.get("pretty") in _TRUE:
            body = orjson.dumps(doc, option=orjson.OPT_INDENT_2)
        else:
            body = encode(doc, self.output.format)
        return self.respond_body(body, status)

    def respond_body(self, body: bytes, status: int = 200) -> web.Response:
        """An already encoded body, in the negotiated Content-Type, with the request's warnings."""
        resp = web.Response(body=body, status=status, content_type=self.output.content_type)
        for w in self.warnings:
            header = warning_header(w)
            if header is not None:
                resp.headers.add("Warning", header)
        return resp


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float | None:
    """Go's ``time.ParseDuration`` for the ``timeout`` query parameter (``32s``, ``1m30s``)."""
    if not text:
        return None
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    seconds = sum(float(n) * _UNIT[u] for n, u in parts)
    return seconds if seconds > 0 else None


def warning_header(text: str) -> str | None:
    """RFC 7234 warning with Kubernetes' ``299 -`` code and agent.

    None for text Kubernetes' ``NewWarningHeader`` refuses (control characters,
    or not valid UTF-8), which it drops: such a header would break the response.
    """
    if any(ch < " " or "\x7f" <= ch <= "\x9f" or "\ud800" <= ch <= "\udfff" for ch in text):
        return None
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


def manager_from_user_agent(user_agent: str) -> str:
    """Kubernetes' default field manager: the User-Agent up to its first ``/``."""
    prefix = user_agent.split("/", 1)[0]
    return "".join(ch for ch in prefix if ch.isprintable())[:128]
