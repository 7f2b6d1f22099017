"""Measure the candidate CEL libraries for DRA selectors: speed and correctness.

Candidates (each wrapped in the smallest adapter that gives it the DRA
``device`` variable and the quantity/semver functions):

* ``cel-expr-python`` — Google's C++ runtime; the adapter *is*
  ``services.kube.cel`` (typed checker + runtime, missing domain → empty map);
* ``cel-python`` (``celpy``) — pure Python, lark parser, no checker;
* ``common-expression-language`` (``cel``) — Rust bindings, no checker.

For each: compile µs per selector (uncached), device-input build µs, evaluate
µs per device for typical selectors, and the score on one shared table of
expressions (Kubernetes' compile_test.go cases plus quantity/semver helpers).
Prints figures only; nothing here asserts a time.

    .venv/bin/python ops/bench/cel.py [--rounds N]
"""

from __future__ import annotations

import argparse
import functools
import importlib
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

# This file is named cel.py: keep its directory off the path so that
# ``import cel`` finds the Rust bindings, not this script.
sys.path[:] = [p for p in sys.path if not p.rstrip("/").endswith("ops/bench")]

from services.kube import quantity as q  # noqa: E402
from services.kube.cel import compiler as draplane_compiler  # noqa: E402
from services.kube.cel import device_view, evaluate  # noqa: E402
from services.kube.cel import semver as sv  # noqa: E402

DRIVER = "gpu.example.com"

# ---------------------------------------------------------------------------
# The shared table: (expression, driver, attributes, capacity, expected), where
# expected is True/False, "compile-error" or "runtime-error".

Row = tuple[str, str, dict[str, Any], dict[str, Any], bool | str]
ATTRS = {
    "model": {"string": "a100"},
    "numa": {"int": 1},
    "mig": {"bool": True},
    "driverVersion": {"version": "1.2.3"},
}
CAPS = {"memory": "80Gi"}
D = f'device.attributes["{DRIVER}"]'
C = f'device.capacity["{DRIVER}"]'

TABLE: list[Row] = [
    ("true", "", {}, {}, True),
    ("?!", "", {}, {}, "compile-error"),
    ("1", "", {}, {}, "compile-error"),
    ("noSuchVar", "", {}, {}, "compile-error"),
    ("device.driver == 1", DRIVER, {}, {}, "compile-error"),
    ('quantity("1").isGreaterThan(semver("1.0.0"))', "", {}, {}, "compile-error"),
    (f'device.driver == "{DRIVER}"', DRIVER, {}, {}, True),
    (f'{D}.model == "a100"', DRIVER, ATTRS, CAPS, True),
    (f"{D}.numa == 1 && {D}.mig", DRIVER, ATTRS, CAPS, True),
    (f'{D}["model"] == "h100"', DRIVER, ATTRS, CAPS, False),
    ('device.attributes["other.example.com"].x == 1', DRIVER, {"other.example.com/x": {"int": 1}}, {}, True),
    ('"x.example.com" in device.attributes', DRIVER, ATTRS, CAPS, False),
    (f'"{DRIVER}" in device.attributes', DRIVER, ATTRS, CAPS, True),
    ('device.attributes["x.example.com"].foo == 1', DRIVER, ATTRS, CAPS, "runtime-error"),
    ('has(device.attributes["x.example.com"].foo)', DRIVER, ATTRS, CAPS, False),
    (f"cel.bind(g, {D}, g.model == 'a100' && g.numa == 1)", DRIVER, ATTRS, CAPS, True),
    (f'{C}.memory.compareTo(quantity("40Gi")) >= 0', DRIVER, ATTRS, CAPS, True),
    (f'{C}.memory.isGreaterThan(quantity("100Gi"))', DRIVER, ATTRS, CAPS, False),
    (f'{C}.memory == quantity("81920Mi")', DRIVER, ATTRS, CAPS, True),
    (f"{C}.memory.asInteger() == 85899345920", DRIVER, ATTRS, CAPS, True),
    ('quantity("50k").add(20) == quantity("50020")', "", {}, {}, True),
    ('quantity("1.5").isInteger()', "", {}, {}, False),
    ('quantity("10Mo") == quantity("1")', "", {}, {}, "runtime-error"),
    (f'{D}.driverVersion.isGreaterThan(semver("1.2.0"))', DRIVER, ATTRS, CAPS, True),
    (f'{D}.driverVersion.compareTo(semver("1.10.0")) == -1', DRIVER, ATTRS, CAPS, True),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', "", {}, {}, True),
    ('semver("1.2.3").major() == 1', "", {}, {}, True),
    ('isSemver("v1.0")', "", {}, {}, False),
    ("1 / 0 == 1", "", {}, {}, "runtime-error"),
    (f'{D}.model.startsWith("a1") && {D}.model.matches("^a[0-9]+$")', DRIVER, ATTRS, CAPS, True),
]

TYPICAL = {
    "driver": f'device.driver == "{DRIVER}"',
    "attributes": f'{D}.model == "a100" && {D}.numa == 1',
    "quantity": f'{C}.memory.compareTo(quantity("40Gi")) >= 0',
    "semver": f'{D}.driverVersion.isGreaterThan(semver("1.2.0"))',
}


# ---------------------------------------------------------------------------
# Adapters.


@dataclass
class Adapter:
    name: str
    compile: Callable[[str], Any]  # returns a program, raises on compile errors
    device: Callable[[str, dict[str, Any], dict[str, Any]], Any]
    evaluate: Callable[[Any, Any], Any]  # returns a bool, raises on runtime errors


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def draplane_adapter() -> Adapter:
    def comp(expression: str) -> Any:
        compiled = draplane_compiler._compile_uncached(expression)
        if compiled.error:
            raise SyntaxError(compiled.error)
        return compiled

    def ev(program: Any, view: Any) -> Any:
        result = evaluate(program, view)
        if isinstance(result, Exception):
            raise result
        return result

    return Adapter(
        "cel-expr-python (draplane)",
        comp,
        lambda driver, attrs, caps: device_view(driver=driver, attributes=attrs, capacity=caps),
        ev,
    )


def celpy_adapter() -> Adapter:
    import celpy
    from celpy import celtypes

    class Quantity:
        __slots__ = ("value",)

        def __init__(self, value: Fraction) -> None:
            self.value = value

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Quantity) and self.value == other.value

        def __hash__(self) -> int:
            return hash(self.value)

    class Semver:
        __slots__ = ("version",)

        def __init__(self, version: sv.Version) -> None:
            self.version = version

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Semver) and sv.compare(self.version, other.version) == 0

        def __hash__(self) -> int:
            return hash(self.version.canonical())

    class DefaultMap(celtypes.MapType):
        def __getitem__(self, key: Any) -> Any:
            try:
                return super().__getitem__(key)
            except KeyError:
                return celtypes.MapType()

    def compare(a: Any, b: Any) -> int:
        if isinstance(a, Quantity):
            return q.compare(a.value, b.value)
        return sv.compare(a.version, b.version)

    functions: dict[str, Any] = {
        "quantity": lambda s: Quantity(q.parse_quantity(str(s)).value),
        "isQuantity": lambda s: celtypes.BoolType(q.is_quantity(str(s))),
        "compareTo": lambda a, b: celtypes.IntType(compare(a, b)),
        "isGreaterThan": lambda a, b: celtypes.BoolType(compare(a, b) == 1),
        "isLessThan": lambda a, b: celtypes.BoolType(compare(a, b) == -1),
        "asInteger": lambda a: celtypes.IntType(q.as_int64(a.value)),
        "isInteger": lambda a: celtypes.BoolType(q.as_int64(a.value) is not None),
        "add": lambda a, b: Quantity(a.value + (b.value if isinstance(b, Quantity) else Fraction(int(b)))),
        "semver": lambda s: Semver(sv.parse(str(s))),
        "isSemver": lambda s: celtypes.BoolType(sv.is_semver(str(s))),
        "major": lambda v: celtypes.IntType(v.version.major),
    }
    env = celpy.Environment()

    def comp(expression: str) -> Any:
        return env.program(env.compile(expression), functions=functions)

    def value(attr: dict[str, Any]) -> Any:
        if "int" in attr:
            return celtypes.IntType(attr["int"])
        if "bool" in attr:
            return celtypes.BoolType(attr["bool"])
        if "string" in attr:
            return celtypes.StringType(attr["string"])
        return Semver(sv.parse(attr["version"]))

    def device(driver: str, attrs: dict[str, Any], caps: dict[str, Any]) -> Any:
        a: dict[Any, Any] = {}
        for name, attr in attrs.items():
            domain, ident = _split(name, driver)
            a.setdefault(celtypes.StringType(domain), celtypes.MapType())[celtypes.StringType(ident)] = value(attr)
        c: dict[Any, Any] = {}
        for name, quantity in caps.items():
            domain, ident = _split(name, driver)
            c.setdefault(celtypes.StringType(domain), celtypes.MapType())[celtypes.StringType(ident)] = Quantity(
                q.parse_quantity(quantity).value
            )
        return {
            "device": celtypes.MapType(
                {
                    celtypes.StringType("driver"): celtypes.StringType(driver),
                    celtypes.StringType("attributes"): DefaultMap(a),
                    celtypes.StringType("capacity"): DefaultMap(c),
                }
            )
        }

    def ev(program: Any, activation: Any) -> Any:
        result = program.evaluate(activation)
        if isinstance(result, celtypes.BoolType):
            return bool(result)
        if not isinstance(result, bool):
            raise RuntimeError(f"not a bool: {result!r}")
        return bool(result)

    return Adapter("cel-python (celpy)", comp, device, ev)


def rust_adapter() -> Adapter:
    # Imported by name: this file is itself called cel.py.
    rust_cel: Any = importlib.import_module("cel")

    qt, st = "\ue000q:", "\ue000s:"

    def quantity_of(text: str) -> Fraction:
        num, _, den = text[len(qt) :].partition("/")
        return Fraction(int(num), int(den))

    def enc(value: Fraction) -> str:
        return f"{qt}{value.numerator}/{value.denominator}"

    def compare(a: str, b: str) -> int:
        if a.startswith(qt):
            return q.compare(quantity_of(a), quantity_of(b))
        return sv.compare(sv.parse(a[len(st) :]), sv.parse(b[len(st) :]))

    functions: dict[str, Callable[..., Any]] = {
        "quantity": lambda s: enc(q.parse_quantity(s).value),
        "isQuantity": q.is_quantity,
        "compareTo": compare,
        "isGreaterThan": lambda a, b: compare(a, b) == 1,
        "isLessThan": lambda a, b: compare(a, b) == -1,
        "asInteger": lambda a: q.as_int64(quantity_of(a)),
        "isInteger": lambda a: q.as_int64(quantity_of(a)) is not None,
        "add": lambda a, b: enc(quantity_of(a) + (Fraction(b) if isinstance(b, int) else quantity_of(b))),
        "semver": lambda s: st + sv.parse(s).canonical(),
        "isSemver": sv.is_semver,
        "major": lambda v: sv.parse(v[len(st) :]).major,
    }

    def value(attr: dict[str, Any]) -> Any:
        if "version" in attr:
            return st + sv.parse(attr["version"]).canonical()
        return next(iter(attr.values()))

    def device(driver: str, attrs: dict[str, Any], caps: dict[str, Any]) -> Any:
        a: dict[str, dict[str, Any]] = {}
        for name, attr in attrs.items():
            domain, ident = _split(name, driver)
            a.setdefault(domain, {})[ident] = value(attr)
        c: dict[str, dict[str, Any]] = {}
        for name, quantity in caps.items():
            domain, ident = _split(name, driver)
            c.setdefault(domain, {})[ident] = enc(q.parse_quantity(quantity).value)
        context = rust_cel.Context(
            variables={"device": {"driver": driver, "attributes": a, "capacity": c}}, functions=functions
        )
        return context

    def ev(program: Any, context: Any) -> Any:
        result = program.execute(context)
        if not isinstance(result, bool):
            raise RuntimeError(f"not a bool: {result!r}")
        return result

    return Adapter("common-expression-language (Rust)", rust_cel.compile, device, ev)


# ---------------------------------------------------------------------------
# Measurements.


def score(adapter: Adapter) -> tuple[int, list[str]]:
    good = 0
    wrong: list[str] = []
    for expression, driver, attrs, caps, expected in TABLE:
        try:
            program = adapter.compile(expression)
        except Exception:
            outcome: bool | str = "compile-error"
        else:
            try:
                outcome = adapter.evaluate(program, adapter.device(driver, attrs, caps))
            except Exception:
                outcome = "runtime-error"
        if outcome == expected and type(outcome) is type(expected):
            good += 1
        else:
            wrong.append(f"{expression!r}: expected {expected}, got {outcome}")
    return good, wrong


def per_call_us(fn: Callable[[], Any], rounds: int) -> float:
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(rounds):
            fn()
        samples.append((time.perf_counter() - start) / rounds * 1e6)
    return statistics.median(samples)


def measure(adapter: Adapter, rounds: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    compile_rounds = max(rounds // 20, 10)
    figures["compile"] = statistics.mean(
        per_call_us(functools.partial(adapter.compile, e), compile_rounds) for e in TYPICAL.values()
    )
    figures["device"] = per_call_us(lambda: adapter.device(DRIVER, ATTRS, CAPS), rounds)
    dev = adapter.device(DRIVER, ATTRS, CAPS)
    for label, expression in TYPICAL.items():
        program = adapter.compile(expression)
        assert adapter.evaluate(program, dev) is True, (adapter.name, expression)
        figures[label] = per_call_us(functools.partial(adapter.evaluate, program, dev), rounds)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()

    adapters: list[Adapter] = [draplane_adapter()]
    for factory in (celpy_adapter, rust_adapter):
        try:
            adapters.append(factory())
        except ImportError as err:
            print(f"skipped: {err}")

    print(f"correctness on {len(TABLE)} shared expressions")
    scores = {}
    for adapter in adapters:
        good, wrong = score(adapter)
        scores[adapter.name] = good
        print(f"  {adapter.name:38} {good:3}/{len(TABLE)}")
        for line in wrong:
            print(f"      ✗ {line}")

    print("\nmicroseconds per call (median of 5 runs)")
    header = ["compile", "device", *TYPICAL]
    print(f"  {'library':38} " + " ".join(f"{h:>10}" for h in header))
    results = {}
    for adapter in adapters:
        try:
            figures = measure(adapter, args.rounds)
        except Exception as err:  # a library that cannot run the typical set
            print(f"  {adapter.name:38} cannot run the typical selectors: {err}")
            continue
        results[adapter.name] = figures
        print(f"  {adapter.name:38} " + " ".join(f"{figures[h]:10.1f}" for h in header))

    base = results.get(adapters[0].name)
    if base:
        print("\nevaluate time relative to cel-expr-python (attributes selector)")
        for name, figures in results.items():
            print(f"  {name:38} {figures['attributes'] / base['attributes']:6.2f}x")


if __name__ == "__main__":
    main()
