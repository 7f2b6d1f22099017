"""Kubernetes Status objects and the error that carries one.

Every failure a client can see — from admission, the committer or the REST
layer — is a `StatusError` whose `status` is the exact ``metav1.Status`` body
Kubernetes would send, with the same code, reason and message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.api.machinery.field_errors import FieldError


class StatusError(Exception):
    """An API failure with its Kubernetes Status body."""

    def __init__(self, status: dict[str, Any]) -> None:
        super().__init__(status.get("message", ""))
        self.status = status

    @property
    def code(self) -> int:
        return int(self.status.get("code", 500))

    @property
    def reason(self) -> str:
        return str(self.status.get("reason", ""))


def make_status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None:  # an empty one is kept: kube-apiserver's 404 of an unknown path and 405 carry "details": {}
        status["details"] = details
    return status


def success_status(details: dict[str, Any] | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    if details:
        status["details"] = details
    return status


def qualified_resource(group: str, resource: str) -> str:
    """``pods`` for the core group, ``resourceclaims.resource.k8s.io`` otherwise."""
    return f"{resource}.{group}" if group else resource


def _details(group: str, resource: str, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"kind": resource}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    return details


def not_found(group: str, resource: str, name: str) -> StatusError:
    qr = qualified_resource(group, resource)
    return StatusError(make_status(404, "NotFound", f'{qr} "{name}" not found', _details(group, resource, name)))


def already_exists(group: str, resource: str, name: str) -> StatusError:
    qr = qualified_resource(group, resource)
    return StatusError(
        make_status(409, "AlreadyExists", f'{qr} "{name}" already exists', _details(group, resource, name))
    )


def generate_name_conflict(group: str, resource: str, name: str) -> StatusError:
    """409 AlreadyExists for a create whose object has ``generateName`` and whose name is taken: kube-apiserver's
    ``CheckGeneratedNameError`` (``NewGenerateNameConflict``, retry after 1 s), whoever picked the name."""
    qr = qualified_resource(group, resource)
    message = f'{qr} "{name}" already exists, the server was not able to generate a unique name for the object'
    return StatusError(
        make_status(409, "AlreadyExists", message, {**_details(group, resource, name), "retryAfterSeconds": 1})
    )


def conflict(group: str, resource: str, name: str, detail: str) -> StatusError:
    qr = qualified_resource(group, resource)
    return StatusError(
        make_status(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {qr} "{name}": {detail}',
            _details(group, resource, name),
        )
    )


MODIFIED_CONFLICT = "the object has been modified; please apply your changes to the latest version and try again"


def modified_conflict(group: str, resource: str, name: str) -> StatusError:
    return conflict(group, resource, name, MODIFIED_CONFLICT)


def invalid(group: str, kind: str, name: str, errors: Sequence[FieldError]) -> StatusError:
    """422 Invalid, worded as ``Kind.group "name" is invalid: <errors>`` (repeated messages once)."""
    qk = f"{kind}.{group}" if group else kind
    rendered = list(dict.fromkeys(str(e) for e in errors))
    if not rendered:
        message = f'{qk} "{name}" is invalid'
    elif len(rendered) == 1:
        message = f'{qk} "{name}" is invalid: {rendered[0]}'
    else:
        message = f'{qk} "{name}" is invalid: [' + ", ".join(rendered) + "]"
    details: dict[str, Any] = {"name": name, "kind": kind, "causes": [e.cause() for e in errors]}
    if not name:  # StatusDetails.Name is omitempty: an object without a name has none in details
        del details["name"]
    if group:
        details["group"] = group
    return StatusError(make_status(422, "Invalid", message, details))


def forbidden(group: str, resource: str, name: str, detail: str) -> StatusError:
    qr = qualified_resource(group, resource)
    subject = f'{qr} "{name}"' if name else qr
    return StatusError(
        make_status(403, "Forbidden", f"{subject} is forbidden: {detail}", _details(group, resource, name))
    )


def bad_request(message: str) -> StatusError:
    return StatusError(make_status(400, "BadRequest", message))


def unauthorized() -> StatusError:
    return StatusError(make_status(401, "Unauthorized", "Unauthorized"))


def method_not_allowed(message: str = "the server does not allow this method on the requested resource") -> StatusError:
    return StatusError(make_status(405, "MethodNotAllowed", message))


def gone(message: str) -> StatusError:
    return StatusError(make_status(410, "Expired", message))


def too_old_resource_version(requested: str, oldest: str) -> StatusError:
    return gone(f"too old resource version: {requested} ({oldest})")


def request_too_large(limit: int) -> StatusError:
    """413 as kube-apiserver's ``limitedReadBody`` words it."""
    return StatusError(make_status(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}"))


def too_large_for_the_log() -> StatusError:
    """413 for a write whose record would not fit in the log (etcd's "request is too large" in Kubernetes)."""
    message = "Request entity too large: the object does not fit in one record of the log"
    return StatusError(make_status(413, "RequestEntityTooLarge", message))


def unsupported_media_type(content_type: str, *, accepted: Sequence[str] | None = None) -> StatusError:
    """415 listing ``accepted`` (a patch's types unless told: the body types are the caller's)."""
    types = ", ".join(ACCEPTED_MEDIA_TYPES if accepted is None else accepted)
    message = f"the body of the request was in an unknown format - accepted media types include: {types}"
    return StatusError(make_status(415, "UnsupportedMediaType", message))


ACCEPTED_MEDIA_TYPES = (
    "application/json",
    "application/yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)


def timeout(message: str) -> StatusError:
    return StatusError(make_status(504, "Timeout", message))


def internal_error(message: str) -> StatusError:
    return StatusError(make_status(500, "InternalError", f"Internal error occurred: {message}"))


def service_unavailable(message: str) -> StatusError:
    return StatusError(make_status(503, "ServiceUnavailable", message))
