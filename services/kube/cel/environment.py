"""The two CEL environments a DRA selector is compiled in.

Kubernetes compiles a selector once, in a typed environment
(``k8s.io/dynamic-resource-allocation/cel/compile.go``): the variable
``device`` is an object with ``driver`` (string), ``attributes`` (map of
domain to map of name to any) and ``capacity`` (map of domain to map of name
to ``kubernetes.Quantity``).

The C++ CEL runtime (``cel-expr-python``) has a full checker but cannot carry
Python objects as opaque values, so draplane uses two environments:

* the **checker** declares ``device.driver``, ``device.attributes`` and
  ``device.capacity`` with their Kubernetes types and every library function
  with Kubernetes' opaque types. It produces the compile errors and the output
  type check.
* the **runtime** declares ``device`` as a plain map and the same functions
  over tagged strings (see `library`). Programs run there, parsed but not
  re-checked: the checker already vouched for them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from services.kube.cel.library import OVERLOADS, QUANTITY_TYPE, SEMVER_TYPE

# Kubernetes 1.29+ uses version 2 of the strings extension.
_STRINGS_VERSION = 2


def _extensions() -> list[Any]:
    return [
        ext_bindings.ExtBindings(),
        ext_strings.ExtStrings(version=_STRINGS_VERSION),
        ext_optional.ExtOptional(),
    ]


def _checker_type(name: str) -> Any:
    T = cel.Type
    return {
        "string": T.STRING,
        "bool": T.BOOL,
        "int": T.INT,
        "double": T.DOUBLE,
        "dyn": T.DYN,
        "quantity": T.AbstractType(QUANTITY_TYPE),
        "semver": T.AbstractType(SEMVER_TYPE),
        "list": T.List(T.DYN),
        "list_string": T.List(T.STRING),
    }[name]


def _runtime_type(name: str) -> Any:
    if name in ("quantity", "semver"):
        return cel.Type.STRING
    return _checker_type(name)


def _function_decls(*, runtime: bool) -> list[Any]:
    typ = _runtime_type if runtime else _checker_type
    by_name: dict[str, list[Any]] = {}
    seen: set[tuple[str, bool, tuple[str, ...]]] = set()
    for o in OVERLOADS:
        params = tuple(("string" if p in ("quantity", "semver") else p) for p in o.params)
        if runtime:
            # Quantity and semver overloads share one runtime signature and
            # one dispatching implementation.
            key = (o.function, o.member, params)
            if key in seen:
                continue
            seen.add(key)
        overload = cel.Overload(
            o.overload_id,
            typ(o.result),
            [typ(p) for p in o.params],
            is_member=o.member,
            **({"impl": o.impl} if runtime else {}),
        )
        by_name.setdefault(o.function, []).append(overload)
    return [cel.FunctionDecl(name, overloads) for name, overloads in by_name.items()]


@lru_cache(maxsize=1)
def checker_env() -> Any:
    """The typed environment: compile errors and output types come from here."""
    T = cel.Type
    attributes = T.Map(T.STRING, T.Map(T.STRING, T.DYN))
    capacity = T.Map(T.STRING, T.Map(T.STRING, T.AbstractType(QUANTITY_TYPE)))
    return cel.NewEnv(
        variables={
            "device.driver": T.STRING,
            "device.attributes": attributes,
            "device.capacity": capacity,
        },
        extensions=_extensions(),
        functions=_function_decls(runtime=False),
    )


@lru_cache(maxsize=1)
def runtime_env() -> Any:
    """The evaluation environment: ``device`` is a map, quantities are tagged strings."""
    return cel.NewEnv(
        variables={"device": cel.Type.DYN},
        extensions=_extensions(),
        functions=_function_decls(runtime=True),
    )
