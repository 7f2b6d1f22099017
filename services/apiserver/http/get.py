"""GET of one object (or of its ``status`` subresource).

Reads come from the apiserver's materialized view through `Backend.get`; the
object is answered as JSON, YAML, a one-row Table or PartialObjectMetadata,
whichever the client negotiated. JSON and protobuf bodies reuse the object
version's encoding (`Scope.encoded`), shared with watches and lists.
"""

from __future__ import annotations

from aiohttp import web

from services.apiserver.http.scope import Scope


async def get(scope: Scope) -> web.Response:
    route = scope.route
    assert route.name is not None
    obj = await scope.backend.get(scope.stored_rt, route.namespace or "", route.name)
    encoded = scope.encoded(obj)
    if encoded is not None:
        return scope.respond_body(scope.body_of(encoded))
    return scope.respond(scope.shape(obj))
