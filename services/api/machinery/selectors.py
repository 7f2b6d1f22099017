"""Label and field selectors, parsed and matched as Kubernetes does.

``labelSelector`` follows ``k8s.io/apimachinery/pkg/labels`` (``=``, ``==``,
``!=``, ``in``, ``notin``, exists, ``!key``, ``>``/``<``) and ``fieldSelector``
follows ``k8s.io/apimachinery/pkg/fields`` (``=``, ``==``, ``!=`` with ``\\``
escapes). Errors carry Kubernetes' exact wording because clients show them to
people. Which fields a resource can be selected on mirrors the field-label
conversion functions each API group registers (``pkg/apis/*/v*/conversion.go``).

The module is pure: the REST layer turns a parsed selector pair into an
``ObjectFilter`` with `object_filter`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from services.api.types.registry import CORE, EVENTS_GROUP, RESOURCE_GROUP, ResourceType
from services.kube.labels import GT_LT_NOT_AN_INTEGER, Requirement, gt_lt_bound
from services.kube.names import is_qualified_name, is_valid_label_value


class SelectorError(ValueError):
    """A selector that does not parse or names an unsupported field (HTTP 400)."""


# --------------------------------------------------------------------------- labels

_IDENT, _END, _CLOSE, _COMMA, _NOT, _DEQ, _EQ, _GT, _IN, _LT, _NEQ, _NOTIN, _OPEN, _ERR = range(14)
_KEYWORDS = {
    ")": _CLOSE,
    ",": _COMMA,
    "!": _NOT,
    "==": _DEQ,
    "=": _EQ,
    ">": _GT,
    "in": _IN,
    "<": _LT,
    "!=": _NEQ,
    "notin": _NOTIN,
    "(": _OPEN,
}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"

def _quote(value: str) -> str:
    """Go's ``%q`` for the ASCII strings selectors carry."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _go_string_slice(values: list[str]) -> str:
    return "[]string{" + ", ".join(_quote(v) for v in values) + "}"


@dataclass(frozen=True, slots=True)
class LabelSelector:
    requirements: tuple[Requirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)


class _Lexer:
    def __init__(self, text: str) -> None:
        self.s = text
        self.pos = 0

    def _read(self) -> str:
        if self.pos < len(self.s):
            ch = self.s[self.pos]
            self.pos += 1
            return ch
        self.pos += 1
        return ""

    def lex(self) -> tuple[int, str]:
        ch = self._read()
        while ch in _WHITESPACE and ch:
            ch = self._read()
        if not ch:
            return _END, ""
        self.pos -= 1
        if ch in _SPECIAL:
            return self._special()
        return self._ident()

    def _ident(self) -> tuple[int, str]:
        start = self.pos
        while self.pos < len(self.s) and self.s[self.pos] not in _SPECIAL and self.s[self.pos] not in _WHITESPACE:
            self.pos += 1
        word = self.s[start : self.pos]
        return _KEYWORDS.get(word, _IDENT), word

    def _special(self) -> tuple[int, str]:
        buf = ""
        last: tuple[int, str] | None = None
        while self.pos < len(self.s) and self.s[self.pos] in _SPECIAL:
            buf += self.s[self.pos]
            self.pos += 1
            tok = _KEYWORDS.get(buf)
            if tok is not None:
                last = (tok, buf)
            elif last is not None:
                self.pos -= 1
                break
        if last is None:
            return _ERR, f"error expected: keyword found '{buf}'"
        return last


class _Parser:
    def __init__(self, text: str) -> None:
        lexer = _Lexer(text)
        self.items: list[tuple[int, str]] = []
        while True:
            tok = lexer.lex()
            self.items.append(tok)
            if tok[0] == _END:
                break
        self.pos = 0

    def _look(self, values: bool) -> tuple[int, str]:
        tok, lit = self.items[self.pos]
        if values and tok in (_IN, _NOTIN):
            tok = _IDENT
        return tok, lit

    def _take(self, values: bool) -> tuple[int, str]:
        out = self._look(values)
        self.pos += 1
        return out

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self._look(True)
            if tok in (_IDENT, _NOT):
                try:
                    reqs.append(self._requirement())
                except SelectorError as exc:
                    raise SelectorError(f"unable to parse requirement: {exc}") from None
                t, lit2 = self._take(True)
                if t == _END:
                    return reqs
                if t == _COMMA:
                    t2, l2 = self._look(True)
                    if t2 not in (_IDENT, _NOT):
                        raise SelectorError(f"found '{l2}', expected: identifier after ','")
                else:
                    raise SelectorError(f"found '{lit2}', expected: ',' or 'end of string'")
            elif tok == _END:
                return reqs
            else:
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def _requirement(self) -> Requirement:
        op = ""
        tok, lit = self._take(True)
        if tok == _NOT:
            op = "!"
            tok, lit = self._take(True)
        if tok != _IDENT:
            raise SelectorError(f"found '{lit}', expected: identifier")
        key = lit
        key_errs = is_qualified_name(key)
        if key_errs:
            raise SelectorError(f"<nil>: Invalid value: {_quote(key)}: {'; '.join(key_errs)}")
        if op == "!":
            return Requirement(key, "!")
        nxt, _ = self._look(True)
        if nxt in (_END, _COMMA):
            return Requirement(key, "exists")
        tok, lit = self._take(False)
        ops = {_IN: "in", _EQ: "=", _DEQ: "==", _GT: "gt", _LT: "lt", _NOTIN: "notin", _NEQ: "!="}
        if tok not in ops:
            raise SelectorError(f"found '{lit}', expected: {_BINARY_OPERATORS}")
        op = ops[tok]
        values = self._set_values() if op in ("in", "notin") else self._exact_value()
        return _new_requirement(key, op, values)

    def _set_values(self) -> list[str]:
        tok, lit = self._take(True)
        if tok != _OPEN:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self._look(True)
        if tok in (_IDENT, _COMMA):
            values = self._identifiers()
            if self._take(True)[0] != _CLOSE:
                raise SelectorError(f"found '{lit}', expected: ')'")
            return values
        if tok == _CLOSE:
            self._take(True)
            return [""]
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def _identifiers(self) -> list[str]:
        out: list[str] = []

        def add(v: str) -> None:
            if v not in out:
                out.append(v)

        while True:
            tok, lit = self._take(True)
            if tok == _IDENT:
                add(lit)
                t2, l2 = self._look(True)
                if t2 == _COMMA:
                    continue
                if t2 == _CLOSE:
                    return sorted(out)
                raise SelectorError(f"found '{l2}', expected: ',' or ')'")
            if tok == _COMMA:
                if not out:
                    add("")
                t2, _ = self._look(True)
                if t2 == _CLOSE:
                    add("")
                    return sorted(out)
                if t2 == _COMMA:
                    add("")
                continue
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def _exact_value(self) -> list[str]:
        tok, _ = self._look(True)
        if tok in (_END, _COMMA):
            return [""]
        tok, lit = self._take(True)
        if tok == _IDENT:
            return [lit]
        raise SelectorError(f"found '{lit}', expected: identifier")


def _new_requirement(key: str, op: str, values: list[str]) -> Requirement:
    errs: list[str] = []
    bound = 0
    if op in ("gt", "lt"):
        bound, refused = gt_lt_bound(values)
        errs.extend(f"values[{i}]: Invalid value: {_quote(v)}: {GT_LT_NOT_AN_INTEGER}" for i, v in refused)
    for i, v in enumerate(values):
        verrs = is_valid_label_value(v)
        if verrs:
            errs.append(f"values[{i}][{key}]: Invalid value: {_quote(v)}: {'; '.join(verrs)}")
    if errs:
        raise SelectorError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    return Requirement(key, op, frozenset(values), bound)


def parse_label_selector(text: str) -> LabelSelector:
    """Parse a ``labelSelector``; raise `SelectorError` with Kubernetes' message."""
    if not text.strip():
        return LabelSelector()
    reqs = _Parser(text).parse()
    reqs.sort(key=lambda r: r.key)
    return LabelSelector(tuple(reqs))


# --------------------------------------------------------------------------- fields


@dataclass(frozen=True, slots=True)
class FieldTerm:
    field: str
    value: str
    negate: bool = False


@dataclass(frozen=True, slots=True)
class FieldSelector:
    terms: tuple[FieldTerm, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.terms

    def requires_exact(self, field: str) -> str | None:
        for t in self.terms:
            if t.field == field and not t.negate:
                return t.value
        return None


def _split_terms(text: str) -> list[str]:
    terms: list[str] = []
    start = 0
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _unescape(value: str) -> str:
    if "\\" not in value and "," not in value and "=" not in value:
        return value
    out: list[str] = []
    escaped = False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise SelectorError(f"invalid field selector: unescaped character: {ch}")
        else:
            out.append(ch)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse_field_selector(text: str) -> FieldSelector:
    """Parse a ``fieldSelector`` (``k=v``, ``k==v``, ``k!=v``, comma separated)."""
    terms: list[FieldTerm] = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        for i in range(len(part)):
            rest = part[i:]
            op = next((o for o in ("!=", "==", "=") if rest.startswith(o)), None)
            if op is not None:
                lhs, rhs = part[:i], part[i + len(op) :]
                terms.append(FieldTerm(lhs, _unescape(rhs), op == "!="))
                break
        else:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
    return FieldSelector(tuple(terms))


FieldGetter = Callable[[dict[str, Any]], str]


def _path(*keys: str) -> FieldGetter:
    def get(obj: dict[str, Any]) -> str:
        cur: Any = obj
        for k in keys:
            if not isinstance(cur, dict):
                return ""
            cur = cur.get(k)
        if cur is None:
            return ""
        if isinstance(cur, bool):
            return "true" if cur else "false"
        return str(cur)

    return get


def _pod_ips(obj: dict[str, Any]) -> str:
    ips = (obj.get("status") or {}).get("podIPs") or []
    return ",".join(str(ip.get("ip", "")) for ip in ips if isinstance(ip, dict))


def _event_source(obj: dict[str, Any]) -> str:
    return str((obj.get("source") or {}).get("component") or obj.get("reportingComponent") or "")


_META: dict[str, FieldGetter] = {
    "metadata.name": _path("metadata", "name"),
    "metadata.namespace": _path("metadata", "namespace"),
}

# (group, plural) -> supported field labels beyond metadata.name / metadata.namespace.
_FIELDS: dict[tuple[str, str], dict[str, FieldGetter]] = {
    (CORE, "pods"): {
        "spec.nodeName": _path("spec", "nodeName"),
        "spec.restartPolicy": _path("spec", "restartPolicy"),
        "spec.schedulerName": _path("spec", "schedulerName"),
        "spec.serviceAccountName": _path("spec", "serviceAccountName"),
        "spec.hostNetwork": lambda o: "true" if (o.get("spec") or {}).get("hostNetwork") else "false",
        "status.phase": _path("status", "phase"),
        "status.podIP": _path("status", "podIP"),
        "status.podIPs": _pod_ips,
        "status.nominatedNodeName": _path("status", "nominatedNodeName"),
    },
    (CORE, "nodes"): {
        "spec.unschedulable": lambda o: "true" if (o.get("spec") or {}).get("unschedulable") else "false",
    },
    (CORE, "namespaces"): {"status.phase": _path("status", "phase")},
    (CORE, "events"): {
        "involvedObject.kind": _path("involvedObject", "kind"),
        "involvedObject.namespace": _path("involvedObject", "namespace"),
        "involvedObject.name": _path("involvedObject", "name"),
        "involvedObject.uid": _path("involvedObject", "uid"),
        "involvedObject.apiVersion": _path("involvedObject", "apiVersion"),
        "involvedObject.resourceVersion": _path("involvedObject", "resourceVersion"),
        "involvedObject.fieldPath": _path("involvedObject", "fieldPath"),
        "reason": _path("reason"),
        "reportingComponent": _path("reportingComponent"),
        "source": _event_source,
        "type": _path("type"),
    },
    # events.k8s.io/v1's labels, mapped to core's (pkg/apis/events/v1/conversion.go,
    # AddFieldLabelConversionsForEvent); they select stored core/v1 Events.
    (EVENTS_GROUP, "events"): {
        "reason": _path("reason"),
        "regarding.kind": _path("involvedObject", "kind"),
        "regarding.namespace": _path("involvedObject", "namespace"),
        "regarding.name": _path("involvedObject", "name"),
        "regarding.uid": _path("involvedObject", "uid"),
        "regarding.apiVersion": _path("involvedObject", "apiVersion"),
        "regarding.resourceVersion": _path("involvedObject", "resourceVersion"),
        "regarding.fieldPath": _path("involvedObject", "fieldPath"),
        "reportingController": _path("reportingComponent"),
        "type": _path("type"),
    },
    (RESOURCE_GROUP, "resourceslices"): {
        "spec.nodeName": _path("spec", "nodeName"),
        "spec.driver": _path("spec", "driver"),
    },
}


def field_getters(rt: ResourceType) -> dict[str, FieldGetter]:
    """Every field label ``rt`` can be selected on, with how to read it."""
    return {**_META, **_FIELDS.get((rt.group, rt.plural), {})}


def _unsupported(rt: ResourceType, label: str) -> SelectorError:
    if (rt.group, rt.plural) in _FIELDS:
        # A conversion function is registered for the kind: its own wording.
        return SelectorError(f"field label not supported: {label}")
    return SelectorError(f'"{label}" is not a known field selector: only "metadata.name", "metadata.namespace"')


def compile_field_selector(rt: ResourceType, selector: FieldSelector) -> Callable[[dict[str, Any]], bool]:
    """A predicate for ``selector`` on objects of ``rt``; unsupported labels raise `SelectorError`."""
    getters = field_getters(rt)
    checks: list[tuple[FieldGetter, str, bool]] = []
    for term in selector.terms:
        getter = getters.get(term.field)
        if getter is None:
            raise _unsupported(rt, term.field)
        checks.append((getter, term.value, term.negate))

    def match(obj: dict[str, Any]) -> bool:
        for getter, value, negate in checks:
            if (getter(obj) == value) == negate:
                return False
        return True

    return match


def object_filter(
    rt: ResourceType, *, label_selector: str = "", field_selector: str = ""
) -> Callable[[dict[str, Any]], bool] | None:
    """Parse both selectors and return one predicate, or None when both are empty."""
    labels = parse_label_selector(label_selector) if label_selector else LabelSelector()
    fields = parse_field_selector(field_selector) if field_selector else FieldSelector()
    field_match = compile_field_selector(rt, fields) if not fields.empty else None
    if labels.empty and field_match is None:
        return None
    if field_match is None:

        def by_labels(obj: dict[str, Any]) -> bool:
            return labels.matches((obj.get("metadata") or {}).get("labels"))

        return by_labels
    if labels.empty:
        return field_match
    fm = field_match

    def both(obj: dict[str, Any]) -> bool:
        return fm(obj) and labels.matches((obj.get("metadata") or {}).get("labels"))

    return both


__all__ = [
    "FieldSelector",
    "FieldTerm",
    "LabelSelector",
    "Requirement",
    "SelectorError",
    "compile_field_selector",
    "field_getters",
    "object_filter",
    "parse_field_selector",
    "parse_label_selector",
]
