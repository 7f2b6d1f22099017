"""Name formats and their exact Kubernetes messages (k8s.io/apimachinery/pkg/util/validation).

Labels, label selectors, object names and attribute names are each one of a
handful of formats. The ``is_*`` functions return Kubernetes' error strings
(empty when valid). Go measures string length in bytes, so lengths here are
UTF-8 byte counts.
"""

from __future__ import annotations

import re

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_QNAME_CHAR_FMT = "[A-Za-z0-9]"
_QNAME_EXT_CHAR_FMT = "[-A-Za-z0-9_.]"
_QUALIFIED_NAME_FMT = "(" + _QNAME_CHAR_FMT + _QNAME_EXT_CHAR_FMT + "*)?" + _QNAME_CHAR_FMT
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"
_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"

# Go's RE2 anchors ``^...$`` match the whole text; fullmatch gives the same
# (Python's ``$`` would also accept a trailing newline).
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_C_IDENTIFIER_RE = re.compile(_C_IDENTIFIER_FMT)


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Kubernetes' ``RegexError``: note the double space after each example's comma."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


EMPTY_ERROR = "must be non-empty"

_DNS1123_LABEL_MSG = regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character",
    _DNS1123_LABEL_FMT,
    "my-name",
    "123-abc",
)
_DNS1123_SUBDOMAIN_MSG = regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character",
    _DNS1123_SUBDOMAIN_FMT,
    "example.com",
)
_QUALIFIED_NAME_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_QUALIFIED_NAME_PART_MSG = regex_error(_QUALIFIED_NAME_ERR, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
_QUALIFIED_NAME_TOO_MANY_SLASHES = (
    "a qualified name "
    + _QUALIFIED_NAME_PART_MSG
    + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
)
_LABEL_VALUE_MSG = regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character",
    _LABEL_VALUE_FMT,
    "MyValue",
    "my_value",
    "12345",
)
_C_IDENTIFIER_MSG = regex_error(
    "a valid C identifier must start with alphabetic character or '_', "
    "followed by a string of alphanumeric characters or '_'",
    _C_IDENTIFIER_FMT,
    "my_name",
    "MY_NAME",
    "MyName",
)


def byte_len(value: str) -> int:
    """Length in bytes, as Go's ``len`` counts a string."""
    return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))


def is_dns1123_label(value: str) -> list[str]:
    errs: list[str] = []
    if byte_len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            # A valid subdomain but not a label: with the length checked, it must be dots.
            errs.append("must not contain dots")
        else:
            errs.append(_DNS1123_LABEL_MSG)
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    errs: list[str] = []
    if byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_DNS1123_SUBDOMAIN_MSG)
    return errs


def is_qualified_name(value: str) -> list[str]:
    """``[prefix/]name``: an optional DNS subdomain prefix and a 63-character name part."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + EMPTY_ERROR)
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [_QUALIFIED_NAME_TOO_MANY_SLASHES]
    if not name:
        errs.append("name part " + EMPTY_ERROR)
    elif byte_len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append("name part " + _QUALIFIED_NAME_PART_MSG)
    return errs


def is_valid_label_value(value: str) -> list[str]:
    errs: list[str] = []
    if byte_len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(_LABEL_VALUE_MSG)
    return errs


def is_c_identifier(value: str) -> list[str]:
    """The format only; callers check the length themselves."""
    return [] if _C_IDENTIFIER_RE.fullmatch(value) else [_C_IDENTIFIER_MSG]
