"""Failures as Kubernetes ``Status`` responses.

Clients branch on ``code`` and ``reason`` (client-go's ``errors.IsNotFound``,
``IsConflict``, ``IsGone``...) and people read ``message``, so every failure the
HTTP layer produces, or passes on from the backend, is a Status body with the
HTTP status equal to its ``code``, in the format the ``Accept`` header
negotiates for errors (`negotiation.error_format`: protobuf for a client that
speaks it, as kube-apiserver's ``ErrorNegotiated``). The constructors here add the ones
`services.api.machinery.status` does not need outside the REST edge.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from services.api.machinery.status import StatusError, internal_error, make_status, timeout
from services.apiserver.http.negotiation import JSON, PROTOBUF, YAML, Format, encode, error_format

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_CONTENT_TYPES: dict[str, str] = {"json": JSON, "yaml": YAML, "protobuf": PROTOBUF}


def status_response(
    status: dict[str, Any], *, fmt: Format = "json", headers: dict[str, str] | None = None
) -> web.Response:
    code = int(status.get("code") or 500)
    return web.Response(
        body=encode(status, fmt),
        status=code,
        content_type=_CONTENT_TYPES[fmt],
        headers=headers,
    )


def error_response(err: StatusError, *, fmt: Format = "json") -> web.Response:
    headers: dict[str, str] | None = None
    retry = (err.status.get("details") or {}).get("retryAfterSeconds")
    if retry:
        headers = {"Retry-After": str(retry)}
    return status_response(err.status, fmt=fmt, headers=headers)


def not_found_path() -> StatusError:
    """What kube-apiserver answers for a URL no handler serves."""
    return StatusError(make_status(404, "NotFound", "the server could not find the requested resource", {}))


def method_not_allowed(method: str = "") -> StatusError:
    return StatusError(
        make_status(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
            {},
        )
    )


def too_many_requests(retry_after: int) -> StatusError:
    return StatusError(
        make_status(
            429,
            "TooManyRequests",
            "Too many requests, please try again later.",
            {"retryAfterSeconds": retry_after},
        )
    )


def write_timeout() -> StatusError:
    return timeout("Timeout: request did not complete within requested timeout - context deadline exceeded")


def invalid_options(kind: str, errors: list[str]) -> StatusError:
    """422 for bad query options, worded as ``CreateOptions.meta.k8s.io "" is invalid: ...``."""
    joined = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    causes = []
    for e in errors:
        field, _, msg = e.partition(": ")
        causes.append({"reason": "FieldValueInvalid", "message": msg, "field": field})
    return StatusError(
        make_status(
            422,
            "Invalid",
            f'{kind}.meta.k8s.io "" is invalid: {joined}',
            {"group": "meta.k8s.io", "kind": kind, "causes": causes},
        )
    )


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Turn every escaping exception into a Status response."""
    try:
        return await handler(request)
    except StatusError as err:
        return error_response(err, fmt=error_format(request.headers.get("Accept")))
    except web.HTTPException:
        raise
    except TimeoutError:
        return error_response(write_timeout(), fmt=error_format(request.headers.get("Accept")))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a bug: answer 500 and keep serving
        log.exception("internal error serving %s %s", request.method, request.path)
        return error_response(
            internal_error(str(exc) or type(exc).__name__), fmt=error_format(request.headers.get("Accept"))
        )
