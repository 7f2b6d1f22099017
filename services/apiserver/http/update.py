"""PUT: replace an object, or its ``status`` (``op="update_status"``).

The body must name the object in the URL and carry the current
``metadata.resourceVersion`` for optimistic concurrency (the committer answers
409 Conflict when it is stale). The committer applies the subresource rule: a
main-resource update ignores status, a status update ignores everything else.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from services.api.machinery.status import bad_request
from services.apiserver.http.create import prepare_object
from services.apiserver.http.scope import Scope
from topics.envelope import Op


async def update(scope: Scope) -> web.Response:
    route = scope.route
    assert route.name is not None
    raw, obj = await scope.body_object()
    opts = "UpdateOptions"
    dry_run = scope.dry_run(opts)
    directive = scope.field_validation(opts)
    manager = scope.field_manager(opts)
    obj = prepare_object(scope, raw, obj, directive=directive)
    body_name = obj["metadata"].get("name") or ""
    if body_name != route.name:
        raise bad_request(f"the name of the object ({body_name}) does not match the name on the URL ({route.name})")
    op: Op = "update_status" if route.subresource == "status" else "update"
    options: dict[str, Any] = {"dryRun": dry_run, "fieldManager": manager, "fieldValidation": directive}
    result = await scope.write(scope.new_request(op, name=route.name, obj=obj, options=options))
    return scope.respond(scope.shape(result.object), result.code)
