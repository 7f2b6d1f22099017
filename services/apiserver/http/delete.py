"""DELETE of one object, and deletecollection.

``DeleteOptions`` come from the body when there is one (JSON, YAML or protobuf), from
the query otherwise, as in Kubernetes: ``gracePeriodSeconds``,
``propagationPolicy`` (Orphan, Background, Foreground), ``preconditions``
(``uid``, ``resourceVersion``; body only), ``dryRun`` and the deprecated
``orphanDependents``. Deletecollection lists with the request's selectors and
sends one ``delete`` request per object; it answers with the list of what was
deleted.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from services.api.machinery.status import StatusError, bad_request
from services.apiserver.http.errors import invalid_options
from services.apiserver.http.list import scope_api_version, selector_filter
from services.apiserver.http.negotiation import decode_body
from services.apiserver.http.scope import Scope

_POLICIES = ("Foreground", "Background", "Orphan")


async def delete_options(scope: Scope) -> dict[str, Any]:
    kind = "DeleteOptions"
    raw = await scope.body()
    if raw.strip():
        body = decode_body(raw, scope.request.headers.get("Content-Type"), kind=kind)
        if not isinstance(body, dict):
            raise bad_request("the body of the request must be a DeleteOptions object")
        body_kind = body.get("kind")
        if body_kind not in (None, "", "DeleteOptions"):
            raise bad_request(f'{body_kind} in version "v1" cannot be handled as a DeleteOptions')
        dry_run = body.get("dryRun") or []
        if not isinstance(dry_run, list):
            raise bad_request("dryRun must be a list of strings")
        grace = body.get("gracePeriodSeconds")
        policy = body.get("propagationPolicy")
        orphan = body.get("orphanDependents")
        preconditions = body.get("preconditions")
    else:
        dry_run = scope.query.getall("dryRun", [])
        grace = scope.int_param("gracePeriodSeconds")
        policy = scope.query.get("propagationPolicy")
        orphan = scope.bool_param("orphanDependents") if "orphanDependents" in scope.query else None
        preconditions = None
    dry_run = scope.dry_run(kind, list(dry_run))
    errors: list[str] = []
    if grace is not None and not isinstance(grace, int):
        raise bad_request("gracePeriodSeconds must be an integer")
    if policy is not None and policy not in _POLICIES:
        errors.append(
            f'propagationPolicy: Unsupported value: "{policy}": supported values: "Foreground", "Background", "Orphan"'
        )
    if policy is not None and orphan is not None:
        errors.append(
            f'propagationPolicy: Invalid value: "{policy}": orphanDependents and deletionPropagation cannot be both set'
        )
    if errors:
        raise invalid_options(kind, errors)
    if orphan is not None and policy is None:
        policy = "Orphan" if orphan else "Background"
    if preconditions is not None and not isinstance(preconditions, dict):
        raise bad_request("preconditions must be an object")
    return {
        "dryRun": dry_run,
        "gracePeriodSeconds": grace,
        "propagationPolicy": policy,
        "preconditions": preconditions or None,
    }


async def delete(scope: Scope) -> web.Response:
    route = scope.route
    assert route.name is not None
    options = await delete_options(scope)
    result = await scope.write(scope.new_request("delete", name=route.name, options=options))
    return scope.respond(scope.shape(result.object), result.code)


async def delete_collection(scope: Scope) -> web.Response:
    route = scope.route
    options = await delete_options(scope)
    listed = await scope.backend.list(scope.stored_rt, route.namespace, match=selector_filter(scope))
    deleted: list[dict[str, Any]] = []
    for obj in listed.items:
        meta = obj.get("metadata") or {}
        request = scope.new_request(
            "delete", name=str(meta.get("name", "")), namespace=str(meta.get("namespace") or ""), options=options
        )
        try:
            result = await scope.write(request)
        except StatusError as err:
            if err.code == 404:  # deleted meanwhile: nothing left to do
                continue
            raise
        if result.object.get("kind") != "Status":
            deleted.append(result.object)
    doc = {
        "kind": route.rt.list_kind,
        "apiVersion": scope_api_version(scope),
        "metadata": {"resourceVersion": listed.resource_version},
        "items": scope.present_all(deleted),
    }
    return scope.respond(doc)
