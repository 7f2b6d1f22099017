"""The Status bodies the kube-apiserver answers failed patches with.

`services.api.machinery.status` has the common constructors; the patch handler in
``k8s.io/apiserver/pkg/endpoints/handlers/patch.go`` adds a few shapes of its
own, reproduced here:

- a JSON patch that does not apply (missing path, failed ``test``) and the
  strategic-merge errors ``ErrNoListOfLists`` and
  ``ErrPatchContentNotMatchRetainKeys`` become
  ``NewGenericServerResponse(422, ...)``: reason ``Invalid``, the fixed message
  "the server rejected our request due to an error in our request" and empty
  details. The underlying reason is not sent to the client; it is kept on the
  exception (``StatusError.__cause__``) for logs.
- errors that are not API statuses (most strategic-merge failures, apply's
  typed-object errors) are turned by ``ErrorToAPIStatus`` into a 500 with no
  reason and the error text as the message. When the patch is at fault
  draplane answers 400 BadRequest with that message instead (no client input
  may cause a 5xx; upstream calls those 500s bugs); `unknown_error` is left
  for a stored object that cannot be processed.
- a patched document that no longer decodes into the kind is a 422 naming the
  field ``patch``.
"""

from __future__ import annotations

from typing import Any, NoReturn

from services.api.machinery import field_errors
from services.api.machinery.patch.gojson import json_kind
from services.api.machinery.status import StatusError, bad_request, make_status

__all__ = [
    "PatchDetail",
    "bad_request",
    "generic_unprocessable",
    "invalid_patch_result",
    "not_an_object_error",
    "raise_unprocessable",
    "request_entity_too_large",
    "unknown_error",
]

GENERIC_422_MESSAGE = "the server rejected our request due to an error in our request"


class PatchDetail(Exception):
    """The internal reason behind a generic Status; attached as ``__cause__``."""


def generic_unprocessable(detail: str) -> StatusError:
    """422 as ``NewGenericServerResponse(http.StatusUnprocessableEntity, "", {}, "", detail, 0, false)``."""
    status = make_status(422, "Invalid", GENERIC_422_MESSAGE)
    status["details"] = {}
    err = StatusError(status)
    err.__cause__ = PatchDetail(detail)
    return err


def raise_unprocessable(detail: str) -> NoReturn:
    """Raise `generic_unprocessable`, keeping ``detail`` as the exception's cause."""
    raise generic_unprocessable(detail) from PatchDetail(detail)


def unknown_error(message: str) -> StatusError:
    """500 as ``ErrorToAPIStatus`` renders an error that is not a Status: no reason, the error text."""
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "code": 500,
    }
    return StatusError(status)


def request_entity_too_large(message: str) -> StatusError:
    """413 as ``NewRequestEntityTooLargeError``."""
    return StatusError(make_status(413, "RequestEntityTooLarge", f"Request entity too large: {message}"))


def invalid_patch_result(patched_json: str, error: str) -> StatusError:
    """422 for a patched document that does not decode: ``NewInvalid({}, "", [Invalid("patch", ...)])``."""
    fe = field_errors.invalid("patch", patched_json, error)
    status = make_status(422, "Invalid", f' "" is invalid: {fe}')
    status["details"] = {"causes": [fe.cause()]}
    return StatusError(status)


def not_an_object_error(value: Any) -> str:
    """The serializer's message when a patched document is not a JSON object."""
    return (
        "couldn't get version/kind; json parse error: json: cannot unmarshal "
        f"{json_kind(value)} into Go value of type struct "
        '{ APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
    )

