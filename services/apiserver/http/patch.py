"""PATCH: wrap the patch for the committer, which applies it.

The handler only decides what kind of patch it is (from ``Content-Type``),
decodes it and checks the query options; it never applies it, so a patch and
the object it patches are always read from the same committed state:

- ``application/json-patch+json`` → ``patch_type="json"`` (a list of operations)
- ``application/merge-patch+json`` → ``"merge"`` (RFC 7386)
- ``application/strategic-merge-patch+json`` → ``"strategic"`` (patchMergeKey,
  ``$patch``, ``$setElementOrder``, ``$retainKeys``, as kubectl sends them)
- ``application/apply-patch+yaml`` → ``"apply"`` (server-side apply; needs
  ``fieldManager``, may ``force``)
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from services.api.machinery.status import bad_request, unsupported_media_type
from services.apiserver.http.errors import invalid_options
from services.apiserver.http.negotiation import PATCH_TYPES, check_json_depth, decode_body, media_type
from services.apiserver.http.scope import Scope


async def patch(scope: Scope) -> web.Response:
    route = scope.route
    assert route.name is not None
    content_type = scope.request.headers.get("Content-Type", "")
    patch_type = PATCH_TYPES.get(media_type(content_type))
    if not patch_type:
        raise unsupported_media_type(content_type)
    raw = await scope.body()
    if not raw.strip():
        raise bad_request("the body of the request was empty")
    opts = "PatchOptions"
    dry_run = scope.dry_run(opts)
    directive = scope.field_validation(opts)
    force = scope.query.get("force")
    if patch_type == "apply":
        manager = scope.field_manager(opts, required=True)
        body: Any = decode_body(raw, "application/yaml")
        if not isinstance(body, dict):
            raise bad_request("error decoding YAML: the apply patch must be an object")
    else:
        if force is not None:
            raise invalid_options(opts, ["force: Forbidden: may not be specified for non-apply patch"])
        manager = scope.field_manager(opts)
        try:
            body = check_json_depth(orjson.loads(raw))
        except orjson.JSONDecodeError as exc:
            raise bad_request(f"error decoding patch: {exc}") from None
        if patch_type == "json" and not isinstance(body, list):
            raise bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
        if patch_type != "json" and not isinstance(body, dict):
            raise bad_request("json: cannot unmarshal array into Go value of type map[string]interface {}")
    options: dict[str, Any] = {"dryRun": dry_run, "fieldManager": manager, "fieldValidation": directive}
    if patch_type == "apply":
        options["force"] = scope.bool_param("force")
    request = scope.new_request("patch", name=route.name, patch=body, patch_type=patch_type, options=options)
    result = await scope.write(request)
    return scope.respond(scope.shape(result.object), result.code)
