"""Give ``device.attributes`` and ``device.capacity`` Kubernetes' lookup semantics.

In Kubernetes, looking up a domain that a device does not have yields an empty
map instead of an error (``newStringInterfaceMapWithDefault`` in
``k8s.io/dynamic-resource-allocation/cel/compile.go``): so
``device.attributes["x.example.com"].foo`` fails with ``no such key: foo``,
``has(device.attributes["x.example.com"].foo)`` is false, and
``"x.example.com" in device.attributes`` stays false.

The C++ runtime has no custom-map hook, so the parsed expression is rewritten
instead: every lookup ``M[k]`` / ``M.k`` on one of those maps (or on a
``cel.bind`` alias of one) becomes ``k in M ? M[k] : {}``; ``M[?k]`` becomes
``optional.of(...)`` of the same; ``has(M.k)`` is true, as in Kubernetes,
where the map reports every key as found.

The same pass folds ``quantity("40Gi")`` and ``semver("1.2.0")`` with literal
arguments into their runtime constants, so that evaluating a selector does not
call back into Python to parse them again for every device.

The rewrite works on the serialized ``cel.expr.ParsedExpr`` that
``cel-expr-python`` produces and reads back (see `wire`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from services.kube.cel.wire import (
    LEN,
    VARINT,
    Msg,
    encode,
    expr_kind,
    field_value,
    max_expr_id,
    parsed_root,
    schema_of,
    string_constant,
    text,
)

_DOMAIN_MAPS = frozenset({"attributes", "capacity"})

Folder = Callable[[str], "str | None"]
"""Maps a literal argument to the runtime constant of the call, None to keep the call."""


class _Rewriter:
    def __init__(self, next_id: int, folders: Mapping[str, Folder]) -> None:
        self.next_id = next_id
        self.folders = folders
        self.changed = False

    def fresh(self) -> int:
        self.next_id += 1
        return self.next_id

    # -- builders ---------------------------------------------------------
    def copy(self, msg: Msg, msg_type: str) -> Msg:
        schema = schema_of(msg_type)
        out: Msg = []
        for num, wt, value in msg:
            if isinstance(value, list):
                value = self.copy(value, schema[num])
            elif (msg_type == "Expr" and num == 2) or (msg_type == "Entry" and num == 1):
                value = self.fresh()
            out.append([num, wt, value])
        return out

    def call(self, function: str, args: list[Msg], target: Msg | None = None) -> Msg:
        body: Msg = []
        if target is not None:
            body.append([1, LEN, target])
        body.append([2, LEN, function.encode()])
        body += [[3, LEN, a] for a in args]
        return [[2, VARINT, self.fresh()], [6, LEN, body]]

    def string(self, value: str) -> Msg:
        return [[2, VARINT, self.fresh()], [3, LEN, encode([[6, LEN, value.encode()]])]]

    def true(self) -> Msg:
        return [[2, VARINT, self.fresh()], [3, LEN, encode([[2, VARINT, 1]])]]

    def empty_map(self) -> Msg:
        return [[2, VARINT, self.fresh()], [8, LEN, []]]

    def ident(self, name: str) -> Msg:
        return [[2, VARINT, self.fresh()], [4, LEN, [[1, LEN, name.encode()]]]]

    def select(self, operand: Msg, field: str) -> Msg:
        body: Msg = [[1, LEN, operand], [2, LEN, field.encode()]]
        return [[2, VARINT, self.fresh()], [5, LEN, body]]

    def default_lookup(self, mapping: Msg, key: Msg, lookup: Msg) -> Msg:
        """``key in mapping ? lookup : {}``."""
        self.changed = True
        contains = self.call("@in", [key, self.copy(mapping, "Expr")])
        return self.call("_?_:_", [contains, lookup, self.empty_map()])

    # -- the rewrite ------------------------------------------------------
    def is_domain_map(self, expr: Msg, aliases: frozenset[str], device_visible: bool) -> bool:
        num, value = expr_kind(expr)
        if num == 4:
            return text(field_value(value, 1)) in aliases
        if num != 5 or field_value(value, 3):
            return False
        operand = field_value(value, 1)
        if text(field_value(value, 2)) not in _DOMAIN_MAPS or operand is None:
            return False
        op_num, op_value = expr_kind(operand)
        return device_visible and op_num == 4 and text(field_value(op_value, 1)) == "device"

    def expr(self, expr: Msg, aliases: frozenset[str], device_visible: bool) -> Msg:
        num, value = expr_kind(expr)
        if num == 5:  # select
            operand = field_value(value, 1)
            field = text(field_value(value, 2))
            if operand is not None and self.is_domain_map(operand, aliases, device_visible):
                if field_value(value, 3):  # has(M.k): every key is "found" in Kubernetes
                    self.changed = True
                    return self.true()
                lookup = self.select(self.copy(operand, "Expr"), field)
                return self.default_lookup(operand, self.string(field), lookup)
            self.children(value, "Select", aliases, device_visible)
            return expr
        if num == 6:  # call
            function = text(field_value(value, 2))
            args = [f[2] for f in value if f[0] == 3]
            if function in self.folders and len(args) == 1 and field_value(value, 1) is None:
                literal = string_constant(args[0])
                folded = self.folders[function](literal) if literal is not None else None
                if folded is not None:
                    self.changed = True
                    return self.string(folded)
            if (
                function in ("_[_]", "_[?_]")
                and len(args) == 2
                and self.is_domain_map(args[0], aliases, device_visible)
            ):
                key = self.expr(args[1], aliases, device_visible)
                lookup = self.call("_[_]", [self.copy(args[0], "Expr"), self.copy(key, "Expr")])
                result = self.default_lookup(args[0], key, lookup)
                if function == "_[?_]":
                    result = self.call("of", [result], target=self.ident("optional"))
                return result
            self.children(value, "Call", aliases, device_visible)
            return expr
        if num == 9:  # comprehension, which is also what cel.bind expands to
            iter_var = text(field_value(value, 1))
            accu_var = text(field_value(value, 3))
            iter_var2 = text(field_value(value, 8))
            accu_init = field_value(value, 4)
            inner = aliases - {iter_var, accu_var, iter_var2}
            if accu_init is not None and self.is_domain_map(accu_init, aliases, device_visible):
                inner = inner | {accu_var}
            inner_visible = device_visible and "device" not in (iter_var, accu_var, iter_var2)
            for field in value:
                if field[0] in (2, 4):
                    field[2] = self.expr(field[2], aliases, device_visible)
                elif field[0] in (5, 6, 7):
                    field[2] = self.expr(field[2], inner, inner_visible)
            return expr
        if num in (7, 8):
            self.children(value, "CreateList" if num == 7 else "CreateStruct", aliases, device_visible)
        return expr

    def children(self, msg: Msg, msg_type: str, aliases: frozenset[str], device_visible: bool) -> None:
        schema = schema_of(msg_type)
        for field in msg:
            sub = schema.get(field[0])
            if sub == "Expr":
                field[2] = self.expr(field[2], aliases, device_visible)
            elif sub == "Entry":
                self.children(field[2], "Entry", aliases, device_visible)


def rewrite_serialized(serialized: bytes, folders: Mapping[str, Folder] | None = None) -> bytes | None:
    """Rewrite a serialized parsed expression; None when nothing needed changing."""
    folders = folders or {}
    triggers = [b"attributes", b"capacity", *(name.encode() for name in folders)]
    if not any(t in serialized for t in triggers):
        return None
    found = parsed_root(serialized)
    if found is None:
        return None
    envelope, parsed, root = found
    rewriter = _Rewriter(max_expr_id(root), folders)
    new_root = rewriter.expr(root, frozenset(), True)
    if not rewriter.changed:
        return None
    for field in parsed:
        if field[0] == 2:
            field[2] = new_root
    return encode(envelope)
