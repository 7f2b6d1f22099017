"""The static cost estimate of a DRA selector, as Kubernetes computes it before it accepts an expression.

Why this module exists: Kubernetes 1.37 rejects a new selector whose worst-case
cost exceeds ``CELSelectorExpressionMaxCost`` (1,000,000) with ``Forbidden: too
complex, exceeds cost limit``
(``pkg/apis/resource/validation/validation.go``, ``validateCELExpression``).
The number is cel-go's ``checker.Cost`` (cel-go v0.29, ``checker/cost.go``)
over the checked expression, with Kubernetes' size estimator for the
``device`` variable (``k8s.io/dynamic-resource-allocation/cel/compile.go``:
driver ≤ 63 characters, ≤ 32 domains of ≤ 32 attributes or capacities, domain
≤ 63 and name ≤ 32 characters, attribute values ≤ 64) and Kubernetes' library
estimator (``k8s.io/apiserver/pkg/cel/library/cost.go``). draplane's CEL runtime
is cel-cpp, which has no estimator, so this module walks the checked
expression that the C++ checker serializes (`wire.checked_parts`) and applies
the same rules. Only the upper bound is computed (the limit compares it).

What it counts, as cel-go does:

- a literal 0; an identifier 1; a field selection on a map or object 1 more
  (``device.driver`` is 2: Kubernetes' ``device`` is an object, where
  draplane's checker declares qualified names); ``has()`` adds nothing
  (Kubernetes turns presence-test cost off);
- a call: its target and arguments plus the function's own cost — 1 by
  default; ``&&``, ``||`` and ``?:`` nothing of their own (the conditional
  counts the dearer branch); string equality and ordering 0.1 per character
  of the shorter side; ``+`` on strings 0.1 per character of the result;
  ``startsWith``/``endsWith`` 0.1 per character of the argument;
  ``contains`` the product of both traversals; ``matches`` the string
  traversal times 0.25 per regex character; ``in`` a list 1 per element;
  Kubernetes' functions as its library estimator says (``quantity``,
  ``semver`` 0.1 per character; ``isGreaterThan``, ``compareTo``, ``major``
  ... 1; ``lowerAscii``, ``upperAscii``, ``trim``, ``substring`` 0.1 and
  ``split``, ``replace`` 0.2 per character of the target; ``_==_`` on two
  quantities or semvers 1);
- a list literal 10, a map literal 30, plus their elements;
- a comprehension (``all``, ``exists``, ``exists_one``, ``map``,
  ``filter``): range, initial value and result once, loop condition and step
  once per element of the range's largest size; ``cel.bind`` its value and
  body once;
- sizes: literal lengths (characters, elements), the device's declared
  maxima by path, 1 for scalars, and what cel-go derives (``split`` and
  string functions' result sizes, a ``map``/``filter`` result as large as
  its range); anything else is unbounded, so iterating it is too complex.

Where it differs from cel-go: functions outside Kubernetes' DRA environment
are not declared (they fail to compile first); ``join``, ``indexOf``,
``lastIndexOf``, ``format`` and the list functions (``sum``, ``min``,
``max``, ``isSorted``, ``includes``) are charged a full traversal of their
target (cel-go refines some of them with element types); a result size cel-go
derives from an element type that draplane's checker declares as ``dyn`` is
unbounded here. Each difference only ever raises the estimate.
Expectations in tests/unit/cel/test_cel_cost.py were produced by running
1.37.2's ``CompileCELExpression`` (cel-go v0.29.2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from services.kube.cel.environment import checker_env
from services.kube.cel.wire import (
    CALL,
    COMPREHENSION,
    CONST,
    IDENT,
    LIST,
    SELECT,
    STRUCT,
    Msg,
    checked_parts,
    decode,
    expr_kind,
    field_value,
    text,
)

__all__ = ["UNBOUNDED", "estimate_cost"]

UNBOUNDED = 2**64 - 1
"""cel-go's ``math.MaxUint64``: an unknown size, and the cost of iterating one."""

_STRING_TRAVERSAL = 0.1
_REGEX_LENGTH = 0.25
_LIST_CREATE, _MAP_CREATE, _STRUCT_CREATE = 10, 30, 40
_ACCUMULATORS = frozenset({"@result", "__result__"})

# Kubernetes' size estimator: the maxima of what ``device`` holds (DeclType.MaxElements by path).
_DRIVER, _DOMAIN, _ID, _ATTRIBUTE_VALUE, _PER_DEVICE = 63, 63, 32, 64, 32


@dataclass(frozen=True, slots=True)
class _Node:
    size: int | None
    keys: _Node | None = None
    values: _Node | None = None
    fields: dict[str, _Node] = field(default_factory=dict)
    attribute_map: bool = False


_ATTRIBUTE = _Node(_ATTRIBUTE_VALUE)
_DEVICE = _Node(
    None,
    fields={
        "driver": _Node(_DRIVER),
        "attributes": _Node(
            _PER_DEVICE,
            keys=_Node(_DOMAIN),
            values=_Node(_PER_DEVICE, keys=_Node(_ID), values=_ATTRIBUTE, attribute_map=True),
        ),
        "capacity": _Node(
            _PER_DEVICE, keys=_Node(_DOMAIN), values=_Node(_PER_DEVICE, keys=_Node(_ID), values=_Node(None))
        ),
    },
)


def _path_size(path: tuple[str, ...]) -> int | None:
    """Kubernetes' ``sizeEstimator.EstimateSize``."""
    if not path or path[0] != "device":
        return None
    node: _Node | None = _DEVICE
    for name in path[1:]:
        if node is None:
            return None
        if name in ("@items", "@values"):
            node = node.values
        elif name == "@keys":
            node = node.keys
        elif name in node.fields:
            node = node.fields[name]
        elif node.attribute_map:
            node = _ATTRIBUTE
        else:
            return None
    return node.size if node is not None else None


def _add(*values: int) -> int:
    return min(sum(values), UNBOUNDED)


def _mul(a: int, b: int) -> int:
    return min(a * b, UNBOUNDED)


def _factor(size: int, factor: float) -> int:
    """cel-go's ``multiplyByCostFactor``: float64 arithmetic, rounded up (an unknown size times 0.1 is ~1.8e18)."""
    x = float(size)
    if x > 0 and factor > 0 and x > UNBOUNDED / factor:
        return UNBOUNDED
    product = math.ceil(x * factor)
    return UNBOUNDED if product >= 2.0**64 else int(product)


@dataclass(slots=True)
class _Var:
    path: tuple[str, ...]
    size: int | None


@dataclass(frozen=True, slots=True)
class _Type:
    kind: str  # "string", "scalar", "list", "map", "object", "dyn", "opaque", "other"
    name: str = ""


def _type_of(msg: Msg | None) -> _Type:
    if not msg:
        return _Type("other")
    num, _, value = msg[0]
    if num == 3:  # primitive
        return _Type("string" if value in (5, 6) else "scalar")
    if num in (1, 5):  # dyn, well-known (Any, Timestamp, Duration)
        return _Type("dyn")
    if num == 4:  # wrapper
        return _Type("scalar")
    if num == 6:
        elem = field_value(decode(value, "ListType"), 1) if isinstance(value, bytes) else None
        element = _type_of(decode(elem, "Type")) if isinstance(elem, bytes) else _Type("other")
        return _Type("list", "scalars" if element.kind == "scalar" else "")
    if num == 7:
        return _Type("map")
    if num == 9:
        return _Type("object", text(value))
    if num == 10:
        return _Type("param")
    if num == 14 and isinstance(value, bytes):
        return _Type("opaque", text(field_value(decode(value, "AbstractType"), 1)))
    return _Type("other")


class _Coster:
    def __init__(self, references: dict[int, Msg], types: dict[int, Msg]) -> None:
        self.references = references
        self.types = types
        self.paths: dict[int, tuple[str, ...]] = {}
        self.sizes: dict[int, int] = {}
        self.scopes: list[tuple[str, _Var]] = []

    # -- bookkeeping -------------------------------------------------------
    @staticmethod
    def expr_id(expr: Msg) -> int:
        value = field_value(expr, 2)
        return value if isinstance(value, int) else 0

    def type(self, expr: Msg) -> _Type:
        return _type_of(self.types.get(self.expr_id(expr)))

    def local(self, name: str) -> _Var | None:
        for var_name, var in reversed(self.scopes):
            if var_name == name:
                return var
        return None

    def path(self, expr: Msg) -> tuple[str, ...]:
        kind, value = expr_kind(expr)
        if kind == IDENT:
            var = self.local(text(field_value(value, 1)))
            if var is not None:
                return var.path
        return self.paths.get(self.expr_id(expr), ())

    def size(self, expr: Msg) -> int:
        """cel-go's ``sizeOrUnknown``."""
        known = self.sizes.get(self.expr_id(expr))
        if known is not None:
            return known
        kind, value = expr_kind(expr)
        if kind == CONST:
            return _literal_size(value)
        if kind == LIST:
            return sum(1 for num, _, _ in value if num == 1)
        if kind == STRUCT and field_value(value, 1) is None:
            return sum(1 for num, _, _ in value if num == 2)
        path = self.path(expr)
        if path and path[0] not in _ACCUMULATORS:
            estimated = _path_size(path)
            if estimated is not None:
                return estimated
        if self.type(expr).kind == "scalar":
            return 1
        if kind == IDENT:
            var = self.local(text(field_value(value, 1)))
            if var is not None and var.size is not None:
                return var.size
        return UNBOUNDED

    # -- the walk ----------------------------------------------------------
    def cost(self, expr: Msg) -> int:
        kind, value = expr_kind(expr)
        if kind == CONST:
            return 0
        if kind == IDENT:
            return self.ident(expr, text(field_value(value, 1)))
        if kind == SELECT:
            return self.select(expr, value)
        if kind == CALL:
            return self.call(expr, value)
        if kind == LIST:
            return _add(_LIST_CREATE, *(self.cost(e) for num, _, e in value if num == 1))
        if kind == STRUCT:
            return self.create(value)
        if kind == COMPREHENSION:
            return self.comprehension(expr, value)
        return 0

    def ident(self, expr: Msg, name: str) -> int:
        var = self.local(name)
        if var is not None:
            return 1
        parts = tuple(name.split("."))
        self.paths[self.expr_id(expr)] = parts
        # Kubernetes' ``device`` is an object: ``device.driver`` is an identifier and a field selection.
        return len(parts) if parts[0] == "device" else 1

    def select(self, expr: Msg, sel: Msg) -> int:
        operand = field_value(sel, 1)
        name = text(field_value(sel, 2))
        reference = self.references.get(self.expr_id(expr))
        if reference is not None and text(field_value(reference, 1)).startswith("device."):
            return self.ident(expr, text(field_value(reference, 1)))
        total = self.cost(operand) if isinstance(operand, list) else 0
        if field_value(sel, 3):  # has(): presence tests cost nothing in Kubernetes
            return total
        if isinstance(operand, list):
            if self.type(operand).kind in ("map", "object", "param"):
                total = _add(total, 1)
            self.paths[self.expr_id(expr)] = (*self.path(operand), name)
        return total

    def create(self, struct: Msg) -> int:
        is_message = field_value(struct, 1) is not None
        total = _STRUCT_CREATE if is_message else _MAP_CREATE
        for num, _, entry in struct:
            if num != 2 or not isinstance(entry, list):
                continue
            for entry_num, _, part in entry:
                if entry_num in (3, 4) and isinstance(part, list):
                    total = _add(total, self.cost(part))
        return total

    def call(self, expr: Msg, call: Msg) -> int:
        function = text(field_value(call, 2))
        target = field_value(call, 1)
        args = [value for num, _, value in call if num == 3 and isinstance(value, list)]
        if function == "dyn" and args:
            total = _add(1, self.cost(args[0]))
            self.copy_size(expr, args[0])
            return total
        arg_costs = [self.cost(a) for a in args]
        total = self.cost(target) if isinstance(target, list) else 0
        overloads = self.overloads(expr)
        own, result_size = self.function_cost(function, overloads, target, args, arg_costs)
        if "index_map" in overloads or "index_list" in overloads:
            if args:
                self.paths[self.expr_id(expr)] = (
                    *self.path(args[0]),
                    "@values" if "index_map" in overloads else "@items",
                )
        if result_size is not None:
            self.sizes[self.expr_id(expr)] = result_size
        return _add(total, own)

    def overloads(self, expr: Msg) -> set[str]:
        reference = self.references.get(self.expr_id(expr))
        if reference is None:
            return set()
        return {text(value) for num, _, value in reference if num == 3}

    def function_cost(
        self, function: str, overloads: set[str], target: Any, args: list[Msg], arg_costs: list[int]
    ) -> tuple[int, int | None]:
        """The call's own cost plus its arguments' (cel-go's ``functionCost``), and its result size if known."""
        args_sum = _add(*arg_costs)
        target_size = self.size(target) if isinstance(target, list) else UNBOUNDED
        # Kubernetes' library estimator first (by function name).
        if function in ("lowerAscii", "upperAscii", "substring", "trim") and isinstance(target, list):
            return _add(_factor(target_size, _STRING_TRAVERSAL), args_sum), target_size
        if function == "split" and isinstance(target, list):
            return _add(_factor(target_size, 2 * _STRING_TRAVERSAL), args_sum), target_size
        if function == "replace" and isinstance(target, list):
            return _add(_factor(target_size, 2 * _STRING_TRAVERSAL), args_sum), None
        if function in ("indexOf", "lastIndexOf", "sum", "min", "max", "isSorted", "includes") and isinstance(
            target, list
        ):
            if self.type(target).kind != "list":
                return _add(_factor(target_size, _STRING_TRAVERSAL), args_sum), None
            # A list: 1 per element, plus a traversal of each when the elements may be strings.
            element = 1 if self.type(target).name == "scalars" else _add(1, _factor(UNBOUNDED, _STRING_TRAVERSAL))
            return _add(_mul(target_size, element), args_sum), None
        if function == "join" and isinstance(target, list):
            # The elements' size is unknown to Kubernetes' estimator: the traversal is unbounded.
            return _add(_factor(UNBOUNDED, _STRING_TRAVERSAL), args_sum), None
        if function == "string" and len(args) == 1:
            return _add(_factor(self.size(args[0]), _STRING_TRAVERSAL), args_sum), self.size(args[0])
        if function in ("find", "findAll") and isinstance(target, list) and args:
            cost = _mul(_factor(_add(target_size, 1), _STRING_TRAVERSAL), _factor(self.size(args[0]), _REGEX_LENGTH))
            return _add(cost, args_sum), target_size
        if function in ("quantity", "isQuantity", "semver", "isSemver") and args:
            return _add(_factor(self.size(args[0]), _STRING_TRAVERSAL), args_sum), None
        if function in _FIXED_KUBERNETES:
            return _add(1, args_sum), None
        if function == "_==_" and len(args) == 2:
            left, right = self.type(args[0]), self.type(args[1])
            if left == right and left.kind == "opaque":
                return _add(1, args_sum), None
        # cel-go's own.
        if overloads & {"starts_with_string", "ends_with_string"} and args:
            return _add(_factor(self.size(args[0]), _STRING_TRAVERSAL), args_sum), None
        if "in_list" in overloads and len(args) == 2:
            return _add(_factor(self.size(args[1]), 1), args_sum), None
        if overloads & {"matches", "matches_string"}:
            subject, regex = (target, args[0]) if isinstance(target, list) and args else [*args, [], []][:2]
            if subject and regex:
                traversal = _factor(_add(self.size(subject), 1), _STRING_TRAVERSAL)
                return _add(_mul(traversal, _factor(self.size(regex), _REGEX_LENGTH)), args_sum), None
        if "contains_string" in overloads and isinstance(target, list) and args:
            cost = _mul(_factor(target_size, _STRING_TRAVERSAL), _factor(self.size(args[0]), _STRING_TRAVERSAL))
            return _add(cost, args_sum), None
        if overloads & {"logical_and", "logical_or"} and len(arg_costs) == 2:
            return args_sum, None
        if "conditional" in overloads and len(arg_costs) == 3:
            size = max(self.size(args[1]), self.size(args[2]))
            return _add(arg_costs[0], max(arg_costs[1], arg_costs[2])), size
        if overloads & {"add_string", "add_bytes", "add_list"} and len(args) == 2:
            size = _add(self.size(args[0]), self.size(args[1]))
            if "add_list" in overloads:
                return _add(1, args_sum), size
            return _add(_factor(size, _STRING_TRAVERSAL), args_sum), size
        if overloads & _SIZED_COMPARISONS and len(args) == 2:
            smallest = min(self.size(args[0]), self.size(args[1]))
            return _add(_factor(smallest, _STRING_TRAVERSAL), args_sum), None
        return _add(1, args_sum), None

    def comprehension(self, expr: Msg, comp: Msg) -> int:
        iter_var = text(field_value(comp, 1))
        iter_range = field_value(comp, 2) or []
        accu_var = text(field_value(comp, 3))
        accu_init = field_value(comp, 4) or []
        loop_condition = field_value(comp, 5) or []
        loop_step = field_value(comp, 6) or []
        result = field_value(comp, 7) or []
        total = _add(self.cost(iter_range), self.cost(accu_init))
        self.scopes.append((accu_var, _Var(self.path(accu_init), self.optional_size(accu_init))))
        if _is_bind(iter_range, loop_condition, accu_var):
            total = _add(total, self.cost(result))
            self.scopes.pop()
            self.copy_size(expr, result)
            return total
        container = self.type(iter_range).kind
        element = "@keys" if container == "map" else "@items"
        range_path = self.path(iter_range)
        self.scopes.append(
            (iter_var, _Var((*range_path, element) if range_path else (), self.element_size(iter_range)))
        )
        loop = _add(self.cost(loop_condition), self.cost(loop_step))
        self.scopes.pop()
        total = _add(total, self.cost(result))
        self.scopes.pop()
        range_size = self.size(iter_range)
        total = _add(total, _mul(range_size, loop))
        if expr_kind(accu_init)[0] in (LIST, STRUCT):
            self.sizes[self.expr_id(expr)] = range_size
        elif expr_kind(accu_init)[0] == CONST:
            self.sizes[self.expr_id(expr)] = self.size(accu_init)
        return total

    def element_size(self, iter_range: Msg) -> int | None:
        """The largest element of a list literal (cel-go's entry size); None for anything else."""
        kind, value = expr_kind(iter_range)
        if kind != LIST:
            return None
        sizes = [self.size(e) for num, _, e in value if num == 1 and isinstance(e, list)]
        largest = max(sizes, default=0)
        return None if largest >= UNBOUNDED else largest

    def optional_size(self, expr: Msg) -> int | None:
        size = self.size(expr)
        return None if size >= UNBOUNDED else size

    def copy_size(self, dst: Msg, src: Msg) -> None:
        size = self.size(src)
        if size < UNBOUNDED:
            self.sizes[self.expr_id(dst)] = size
        path = self.path(src)
        if path:
            self.paths[self.expr_id(dst)] = path


_FIXED_KUBERNETES = frozenset(
    {
        "sign",
        "asInteger",
        "isInteger",
        "asApproximateFloat",
        "isGreaterThan",
        "isLessThan",
        "compareTo",
        "add",
        "sub",
        "major",
        "minor",
        "patch",
    }
)
_SIZED_COMPARISONS = frozenset(
    {
        "equals",
        "not_equals",
        "less_string",
        "greater_string",
        "less_equals_string",
        "greater_equals_string",
        "less_bytes",
        "greater_bytes",
        "less_equals_bytes",
        "greater_equals_bytes",
    }
)


def _literal_size(constant: Any) -> int:
    if not isinstance(constant, bytes):
        return 1
    for num, _, value in decode(constant, "Constant"):
        if num in (6, 7) and isinstance(value, bytes):  # string (characters), bytes
            return len(value.decode("utf-8", "replace")) if num == 6 else len(value)
        return 1
    return 1


def _is_bind(iter_range: Msg, loop_condition: Msg, accu_var: str) -> bool:
    kind, value = expr_kind(iter_range)
    if kind != LIST or any(num == 1 for num, _, _ in value):
        return False
    cond_kind, constant = expr_kind(loop_condition)
    if cond_kind != CONST or not isinstance(constant, bytes):
        return False
    return decode(constant, "Constant") == [[2, 0, 0]] and accu_var not in _ACCUMULATORS


@lru_cache(maxsize=1024)
def estimate_cost(expression: str) -> int | None:
    """The worst-case cost Kubernetes estimates for a selector; None when it does not compile."""
    try:
        checked = checker_env().compile(expression)
    except RuntimeError:
        return None
    parts = checked_parts(checked.serialize())
    if parts is None:
        return None
    root, references, types = parts
    return _Coster(references, types).cost(root)
