"""A write chain decided one write at a time, by the committer's rule: for in-memory ``APIClient``s.

Why: the scheduler's plugins send dependent writes with ``APIClient.write_chain``
(``LogAPIClient`` hands them to the committer in one append). Clients that
hold objects in memory — the tests' fake, replay's client that never writes,
the scheduling-cycle benchmark's store — must decide a chain exactly as the
committer would, so this module does it for them with their own single-write
methods: each write in order; one whose predecessor was not applied is refused
by `services.runtime.request_chains.check_chain` (the committer's rule and
message), unapplied; an ``after_version`` write names the version its
predecessor stored, so the client's own resourceVersion check refuses it 409
"the object has been modified" when someone wrote in between.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.api.machinery.status import StatusError
from services.runtime.request_chains import Decision, check_chain
from services.scheduler.client import APIClient, Write, WriteResult
from topics.envelope import Request, UserInfo

_USER = UserInfo("system:kube-scheduler")


@dataclass(slots=True)
class _Written:
    """What a write left, as `check_chain` compares it (``request_chains.Written``)."""

    key: str
    object: dict[str, Any]
    offset: int


async def write_one_by_one(client: APIClient, writes: Sequence[Write]) -> list[WriteResult]:
    """`APIClient.write_chain` for ``client``: its single-write methods, one write after the other."""
    results: list[WriteResult] = []
    prior: Decision | None = None
    after = ""
    for write in writes:
        request = _request(write, after)
        after = request.id
        try:
            # The predecessor's own entry stands for the object: the version check is the client's, below.
            check_chain(request, prior, _entry(prior))
            result: WriteResult = await _send(client, _after_version(write, prior))
        except StatusError as err:
            result = err
        results.append(result)
        if isinstance(result, StatusError):
            prior = Decision(False)
        else:
            prior = Decision(True, _Written(request.key, result, int(_version(result) or 0)))
    return results


def _request(write: Write, after: str) -> Request:
    group, plural = write.resource
    return Request(
        id=uuid.uuid4().hex,
        op=write.verb,
        group=group,
        resource=plural,
        namespace=write.object_namespace,
        name=write.object_name,
        user=_USER,
        reply_to="",
        after=after,
        after_version=write.after_version,
    )


def _entry(prior: Decision | None) -> tuple[int, Any] | None:
    written = prior.write if prior is not None else None
    return None if written is None else (written.offset, written.object)


def _version(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _after_version(write: Write, prior: Decision | None) -> Write:
    """The write with its predecessor's version as its resourceVersion precondition (``after_version``)."""
    written = prior.write if prior is not None else None
    if not write.after_version or write.obj is None or written is None:
        return write
    version = _version(written.object)
    if not version:
        return write
    meta = dict(write.obj.get("metadata") or {})
    meta["resourceVersion"] = version
    return Write(
        write.verb,
        write.resource,
        obj={**write.obj, "metadata": meta},
        name=write.name,
        namespace=write.namespace,
        subresource=write.subresource,
        patch=write.patch,
        patch_type=write.patch_type,
    )


async def _send(client: APIClient, write: Write) -> dict[str, Any]:
    if write.verb == "create":
        assert write.obj is not None
        return await client.create(write.resource, write.obj, namespace=write.namespace, subresource=write.subresource)
    if write.verb == "update":
        assert write.obj is not None
        return await client.update(write.resource, write.obj)
    if write.verb == "update_status":
        assert write.obj is not None
        return await client.update_status(write.resource, write.obj)
    if write.verb == "patch":
        assert write.patch is not None
        return await client.patch(
            write.resource,
            write.object_name,
            write.patch,
            namespace=write.object_namespace,
            patch_type=write.patch_type,
            subresource=write.subresource,
        )
    await client.delete(write.resource, write.object_name, namespace=write.object_namespace)
    return {"kind": "Status", "apiVersion": "v1", "status": "Success"}
