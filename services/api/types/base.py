"""The base class and scalar types every typed API model is built from.

Why this module exists: all models share one wire contract, and it is set
here once.

- camelCase wire names (``rename="camel"``; the few names camel-casing gets
  wrong, such as ``podCIDR`` or ``hostIP``, are spelled out per field);
- every field is optional and defaults to ``None`` ("unset"), and unset fields
  are omitted on encode (``omit_defaults``). A value that was set — even
  ``""``, ``0``, ``false``, ``{}`` or ``[]`` — is encoded back exactly, so
  JSON → model → JSON is lossless. Kubernetes would drop some empty values
  (omitempty); keeping them is allowed and simpler. Required fields are the
  validator's business, not the decoder's, exactly as in Kubernetes where a
  missing ``name`` decodes fine and fails validation with "Required value";
- unknown fields are rejected (``forbid_unknown_fields``), which makes the
  fast path of strict field validation a single C-level decode.

The scalar aliases carry Kubernetes' decode-time checks (int32/int64 ranges,
the resource.Quantity and metav1.Time formats) as msgspec constraints, and a
``k8s`` tag in ``Meta.extra`` so the schema walker (`services.api.types.schema`)
can recognise them and word errors as Go's decoder does.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from services.kube.quantity import WIRE_PATTERN

__all__ = [
    "INT32_MAX",
    "INT32_MIN",
    "INT64_MAX",
    "INT64_MIN",
    "QUANTITY_PATTERN",
    "RFC3339_MICRO_PATTERN",
    "RFC3339_PATTERN",
    "UINT64_MAX",
    "Int32",
    "Int64",
    "IntOrString",
    "K8sStruct",
    "MicroTime",
    "Quantity",
    "RawJSON",
    "ResourceList",
    "Time",
]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1

# What Quantity.UnmarshalJSON accepts (services.kube.quantity holds the rule).
QUANTITY_PATTERN = WIRE_PATTERN

# time.RFC3339 and metav1.MicroTime's RFC3339Micro layout as Go's time.Parse
# reads them: the hour may have one digit, an offset may be up to 24:60, the
# day must exist in its month (leap years included). RFC3339 allows optional
# fractional seconds; RFC3339Micro needs exactly six.
_LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)"
_DATE = (
    r"(?:[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"
    r"|[0-9]{4}-(?:0[13-9]|1[0-2])-(?:29|30)"
    r"|[0-9]{4}-(?:0[13578]|1[02])-31"
    r"|" + _LEAP_YEAR + r"-02-29)"
)
_CLOCK = r"T(?:[01]?[0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
_ZONE = r"(?:Z|[+-](?:[01][0-9]|2[0-4]):(?:[0-5][0-9]|60))"
RFC3339_PATTERN = "^" + _DATE + _CLOCK + r"(?:[.,][0-9]+)?" + _ZONE + r"\Z"
RFC3339_MICRO_PATTERN = "^" + _DATE + _CLOCK + r"[.,][0-9]{6}" + _ZONE + r"\Z"


def _tag(name: str) -> dict[str, Any]:
    return {"k8s": name}


Int32 = Annotated[int, msgspec.Meta(ge=INT32_MIN, le=INT32_MAX, extra=_tag("int32"))]
Int64 = Annotated[int, msgspec.Meta(ge=INT64_MIN, le=INT64_MAX, extra=_tag("int64"))]

# resource.Quantity: a string in Kubernetes' quantity syntax, or a JSON number
# (Kubernetes accepts both; numbers are kept as numbers here, see
# docs/decisions/models.md). Integers are limited to int64, which the log's
# JSON encoder (orjson) can write and msgspec can check in C.
QuantityString = Annotated[str, msgspec.Meta(pattern=QUANTITY_PATTERN, extra=_tag("quantity"))]
QuantityInt = Annotated[int, msgspec.Meta(ge=INT64_MIN, le=INT64_MAX, extra=_tag("quantity"))]
Quantity = QuantityString | QuantityInt | float

# metav1.Time / metav1.MicroTime: RFC 3339 strings, kept exactly as sent.
Time = Annotated[str, msgspec.Meta(pattern=RFC3339_PATTERN, extra=_tag("time"))]
MicroTime = Annotated[str, msgspec.Meta(pattern=RFC3339_MICRO_PATTERN, extra=_tag("microtime"))]

# intstr.IntOrString.
IntOrString = Int32 | str

# runtime.RawExtension and friends: any JSON value, passed through untouched.
RawJSON = Any

# core/v1 ResourceList: resource name → quantity.
ResourceList = dict[str, Quantity]


class K8sStruct(
    msgspec.Struct,
    rename="camel",
    omit_defaults=True,
    forbid_unknown_fields=True,
    kw_only=True,
):
    """Base of every API model: camelCase, optional fields, strict about unknown fields."""
