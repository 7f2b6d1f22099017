"""POST: create an object, or bind a pod (``pods/binding``).

The body (JSON, YAML or protobuf) is checked the way Kubernetes' create handler checks
it — apiVersion and kind against the URL, namespace against the URL, field
validation — then wrapped in a ``create`` `Request` for the committer. The
reply (201 with the stored object, or a Status) is the response.

``pods/{name}/binding`` is a create too: ``Request(op="create",
resource="pods", name=<pod>, object=<Binding>, options={"subresource":
"binding"})``; the committer sets ``spec.nodeName`` on the pod.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from services.api.machinery.status import bad_request
from services.api.types import model_for
from services.apiserver.http import field_validation
from services.apiserver.http.negotiation import PROTOBUF, media_type
from services.apiserver.http.scope import Scope


def expected_kind(scope: Scope) -> tuple[str, str]:
    """(apiVersion, kind) a body sent to this URL must have."""
    route = scope.route
    if route.subresource == "binding":
        return "v1", "Binding"
    rt = route.rt
    return (f"{rt.group}/{route.version}" if rt.group else route.version), rt.kind


def prepare_object(scope: Scope, raw: bytes, obj: Any, *, directive: str) -> dict[str, Any]:
    """Check a body against the URL and apply field validation; return it completed."""
    api_version, kind = expected_kind(scope)
    if not isinstance(obj, dict):
        raise bad_request(
            f"the object provided is unrecognized (must be of type {kind}): "
            f"couldn't get version/kind; json parse error: expected an object"
        )
    body_version = obj.get("apiVersion") or api_version
    body_kind = obj.get("kind") or kind
    if not isinstance(body_version, str) or not isinstance(body_kind, str):
        raise bad_request(f"the object provided is unrecognized (must be of type {kind})")
    version = body_version.rsplit("/", 1)[-1]
    if body_version != api_version and body_kind == kind:
        raise bad_request(
            f"the API version in the data ({body_version}) does not match the expected API version ({api_version})"
        )
    if body_kind != kind:
        raise bad_request(
            f'{body_kind} in version "{version}" cannot be handled as a {kind}: '
            f'no kind "{body_kind}" is registered for version "{body_version}"'
        )
    obj.setdefault("apiVersion", api_version)
    obj.setdefault("kind", kind)
    meta = obj.get("metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    if not isinstance(meta, dict):
        raise bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: metadata must be an object')
    route = scope.route
    if route.rt.namespaced:
        ns = meta.get("namespace") or ""
        if ns and ns != route.namespace:
            raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
        meta["namespace"] = route.namespace
    elif "namespace" in meta and route.subresource != "binding":
        meta.pop("namespace")
    model = None if route.subresource == "binding" else model_for(route.rt.group, route.version, kind)
    content_type = media_type(scope.request.headers.get("Content-Type"))
    if content_type == PROTOBUF:
        # A protobuf body holds only the type's fields, once each: kube's strict decoding has nothing to find.
        return obj
    scope.warnings.extend(
        field_validation.check(
            raw=raw,
            obj=obj,
            directive=directive,
            kind=kind,
            version=version,
            model=model,
            json_body=content_type in ("", "application/json"),
        )
    )
    return obj


async def create(scope: Scope) -> web.Response:
    raw, obj = await scope.body_object()
    opts = "CreateOptions"
    dry_run = scope.dry_run(opts)
    directive = scope.field_validation(opts)
    manager = scope.field_manager(opts)
    obj = prepare_object(scope, raw, obj, directive=directive)
    route = scope.route
    if route.subresource == "binding":
        assert route.name is not None
        name = route.name
        body_name = obj["metadata"].get("name")
        if body_name and body_name != name:
            raise bad_request(f"the name of the object ({body_name}) does not match the name on the URL ({name})")
    else:
        name = str(obj["metadata"].get("name") or "")
    options: dict[str, Any] = {"dryRun": dry_run, "fieldManager": manager, "fieldValidation": directive}
    result = await scope.write(scope.new_request("create", name=name, obj=obj, options=options))
    return scope.respond(scope.shape(result.object), result.code)
