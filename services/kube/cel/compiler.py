"""Compile DRA CEL selectors, with Kubernetes' error messages, and cache them.

``compile`` mirrors ``CompileCELExpression`` in
``k8s.io/dynamic-resource-allocation/cel/compile.go``: a syntax or type error
is ``compilation failed: ERROR: <input>:1:1: ...`` and an expression whose
type is neither bool nor dynamic is ``must evaluate to bool or the unknown
type, not int``. API validation reports that text as the ``Invalid value``
detail of ``spec.devices.requests[i].selectors[j].cel.expression`` (and of
DeviceClass ``spec.selectors[j].cel.expression``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from services.kube.cel import library
from services.kube.cel.environment import checker_env, runtime_env
from services.kube.cel.rewrite import rewrite_serialized
from services.kube.cel.semver import SemverError
from services.kube.cel.semver import parse as parse_semver
from services.kube.cel.typenames import cel_go_name, split_type_list
from services.kube.quantity import QuantityError, parse_quantity

_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
# ``device`` is an object in Kubernetes: an unknown field is cel-go's
# "undefined field", where the C++ checker sees an unknown qualified name.
_DEVICE_FIELD = re.compile(r"undeclared reference to 'device\.([A-Za-z_][A-Za-z0-9_]*)' \(in container ''\)")
_STATUS_SUFFIX = re.compile(r" \[[A-Z_]+\]$")
_NO_OVERLOAD = re.compile(r"ERROR: <input>:(\d+):(\d+): found no matching overload for '([^']+)' applied to '\((.*)\)'")
# Kubernetes accepts bool and its "unknown" type (the type of an attribute
# value). The C++ checker has one dynamic type for both.
_ACCEPTED_OUTPUT = frozenset({"BOOL", "DYN"})
COMPILE_CACHE_SIZE = 1024


@dataclass(frozen=True, slots=True, eq=False)
class CompiledSelector:
    """A compiled selector: either ``error`` (Kubernetes' detail text) or a program."""

    expression: str
    error: str | None
    output_type: str = ""
    program: Any = None


def strip_status(message: str) -> str:
    """``INVALID_ARGUMENT: text [INVALID_ARGUMENT]`` → ``text``."""
    return _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", message.strip(), count=1))


def _fold_quantity(text: str) -> str | None:
    try:
        return library.encode_quantity(parse_quantity(text).value)
    except QuantityError:
        return None  # keep the call: it reports the error at evaluation, as Kubernetes does


def _fold_semver(text: str) -> str | None:
    try:
        return library.encode_semver(parse_semver(text))
    except SemverError:
        return None


_FOLDERS = {"quantity": _fold_quantity, "semver": _fold_semver}


def _is_member_call(expression: str, line: int, column: int, function: str) -> bool:
    lines = expression.split("\n")
    if not 0 < line <= len(lines):
        return False
    offset = sum(len(text) + 1 for text in lines[: line - 1]) + column - 1
    if expression[offset : offset + 1] != "(":
        return False
    before = expression[:offset].rstrip()
    if not before.endswith(function):
        return False
    return before[: len(before) - len(function)].rstrip().endswith(".")


def _member_overloads(detail: str, expression: str) -> str:
    """cel-go prints a member call's receiver apart: ``'kubernetes.Quantity.(int)'``."""

    def fix(match: re.Match[str]) -> str:
        line, column, function, args = match.groups()
        if not _is_member_call(expression, int(line), int(column), function):
            return match.group(0)
        parts = split_type_list(args)
        if not parts:
            return match.group(0)
        rendered = f"{parts[0]}.({', '.join(parts[1:])})"
        return f"ERROR: <input>:{line}:{column}: found no matching overload for '{function}' applied to '{rendered}'"

    return _NO_OVERLOAD.sub(fix, detail)


def _compile_uncached(expression: str) -> CompiledSelector:
    try:
        checked = checker_env().compile(expression)
    except RuntimeError as err:
        detail = _DEVICE_FIELD.sub(r"undefined field '\1'", strip_status(str(err)))
        detail = _member_overloads(detail, expression)
        return CompiledSelector(expression, "compilation failed: " + detail)
    output = checked.return_type().name()
    if output not in _ACCEPTED_OUTPUT:
        return CompiledSelector(expression, f"must evaluate to bool or the unknown type, not {cel_go_name(output)}")
    env = runtime_env()
    try:
        program = env.compile(expression, disable_check=True)
        rewritten = rewrite_serialized(program.serialize(), _FOLDERS)
        if rewritten is not None:
            program = env.deserialize(rewritten)
    except (RuntimeError, ValueError, IndexError) as err:  # pragma: no cover - defensive
        return CompiledSelector(expression, "program instantiation failed: " + strip_status(str(err)))
    return CompiledSelector(expression, None, cel_go_name(output), program)


@lru_cache(maxsize=COMPILE_CACHE_SIZE)
def compile(expression: str) -> CompiledSelector:
    """Compile a selector once; later calls with the same text hit the cache."""
    return _compile_uncached(expression)


def compile_check(expression: str) -> str | None:
    """None when the selector compiles to bool; else Kubernetes' error detail."""
    return compile(expression).error
