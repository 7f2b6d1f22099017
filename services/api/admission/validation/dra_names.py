"""Name rules specific to DRA (pkg/apis/resource/validation, 1.31).

Drivers are named like CSI drivers (a DNS subdomain of at most 63 bytes,
case-insensitive), pools are one or more DNS subdomains joined by ``/``,
requests and devices are DNS labels, device classes are DNS subdomains.
Attribute and capacity names are C identifiers, optionally prefixed with a
driver-style domain (``gpu.example.com/memory``); constraint attributes must
carry that domain.
"""

from __future__ import annotations

from functools import lru_cache

from services.api.admission.validation.names import (
    DNS1123_SUBDOMAIN_MAX_LENGTH,
    byte_len,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    is_c_identifier,
    is_dns1123_subdomain,
    name_is_dns_subdomain,
)
from services.api.machinery.field_errors import (
    FieldError,
    invalid,
    required,
    too_long,
    too_long_max_length,
    type_invalid,
)

DRIVER_NAME_MAX_LENGTH = 63
POOL_NAME_MAX_LENGTH = DNS1123_SUBDOMAIN_MAX_LENGTH
DEVICE_MAX_ID_LENGTH = 32

validate_request_name = dns1123_label_errors
validate_device_name = dns1123_label_errors
validate_device_class_name = dns1123_subdomain_errors


def validate_driver_name(name: str, path: str) -> list[FieldError]:
    """Core's ValidateCSIDriverName (an empty name also fails the subdomain check)."""
    errs: list[FieldError] = []
    if not name:
        errs.append(required(path))
    if byte_len(name) > DRIVER_NAME_MAX_LENGTH:
        errs.append(too_long(path, name, DRIVER_NAME_MAX_LENGTH))
    errs.extend(invalid(path, name, m) for m in is_dns1123_subdomain(name.lower()))
    return errs


def validate_pool_name(name: str, path: str) -> list[FieldError]:
    if not name:
        return [required(path)]
    errs: list[FieldError] = []
    if byte_len(name) > POOL_NAME_MAX_LENGTH:
        errs.append(too_long_max_length(path, name, POOL_NAME_MAX_LENGTH))
    for part in name.split("/"):
        errs.extend(dns1123_subdomain_errors(part, path))
    return errs


def validate_node_name(name: str, path: str) -> list[FieldError]:
    return [invalid(path, name, m) for m in name_is_dns_subdomain(name, False)]


def validate_c_identifier(identifier: str, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if byte_len(identifier) > DEVICE_MAX_ID_LENGTH:
        errs.append(too_long_max_length(path, identifier, DEVICE_MAX_ID_LENGTH))
    errs.extend(type_invalid(path, identifier, m) for m in is_c_identifier(identifier))
    return errs


def validate_qualified_name(name: str, path: str) -> list[FieldError]:
    """An attribute or capacity name: ``<C identifier>`` or ``<driver-style domain>/<C identifier>``.

    Like Kubernetes 1.31, a name with more than one ``/`` is not rejected here.
    """
    if not name:
        return [required(path, "name required")]
    parts = name.split("/")
    if len(parts) == 1:
        return validate_c_identifier(parts[0], path)
    if len(parts) != 2:
        return []
    errs: list[FieldError] = []
    domain, identifier = parts
    if not domain:
        errs.append(required(path, "the prefix must not be empty"))
    else:
        errs.extend(validate_driver_name(domain, path))
    if not identifier:
        errs.append(required(path, "the name must not be empty"))
    else:
        errs.extend(validate_c_identifier(identifier, path))
    return errs


@lru_cache(maxsize=4096)
def is_valid_qualified_name(name: str) -> bool:
    """Cached verdict: slices repeat the same attribute names on every device."""
    return not validate_qualified_name(name, "")


def validate_fully_qualified_name(name: str, path: str) -> list[FieldError]:
    """A qualified name that must carry its domain (constraints' ``matchAttribute``)."""
    errs = validate_qualified_name(name, path)
    if "/" not in name:
        errs.append(required(f"{path}.domain", "must include a prefix"))
    return errs
