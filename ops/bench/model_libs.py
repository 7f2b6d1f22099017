"""msgspec Structs vs pydantic v2 models: decode + encode of a Pod, a ResourceClaim and a 128-device ResourceSlice.

Why this benchmark exists: the typed models sit on every write, so the model
library was chosen by measurement (docs/decisions/models.md). Both libraries
get the same schema — the pydantic models are generated from the msgspec
models' schema (same fields, aliases, constraints, forbidden extras, strict
types) — and both must reproduce the input exactly (checked before timing).

Run: ``.venv/bin/python ops/bench/model_libs.py [--rounds N] [--best]``. Prints µs per
object (median of several rounds) for decode (JSON bytes → model), encode
(model → JSON bytes) and both, and the pydantic/msgspec ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import msgspec
import orjson
import pydantic

from services.api.types import K8sStruct, core_v1, resource_hub
from services.api.types.base import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    QUANTITY_PATTERN,
    RFC3339_MICRO_PATTERN,
    RFC3339_PATTERN,
)
from services.api.types.schema import ListNode, MapNode, Node, ScalarNode, StructNode, struct_node
from tests.support import samples

# python-re: the same regex engine (and patterns) msgspec uses.
_CONFIG = pydantic.ConfigDict(extra="forbid", strict=True, populate_by_name=False, regex_engine="python-re")


def pydantic_model(cls: type[K8sStruct]) -> type[pydantic.BaseModel]:
    """A pydantic v2 model with exactly the schema of a msgspec model."""
    cache: dict[type, type[pydantic.BaseModel]] = {}

    def build(node: StructNode) -> type[pydantic.BaseModel]:
        if node.cls not in cache:
            fields: dict[str, Any] = {
                spec.attr: (annotation(spec.node) | None, pydantic.Field(default=None, alias=spec.wire))
                for spec in node.fields.values()
            }
            cache[node.cls] = pydantic.create_model(node.cls.__name__, __config__=_CONFIG, **fields)
        return cache[node.cls]

    def annotation(node: Node) -> Any:
        if isinstance(node, StructNode):
            return build(node)
        if isinstance(node, ListNode):
            return list[annotation(node.item)]  # type: ignore[misc]
        if isinstance(node, MapNode):
            return dict[str, annotation(node.value)]  # type: ignore[misc]
        return scalar(node)

    def scalar(node: ScalarNode) -> Any:
        int32 = Annotated[int, pydantic.Field(ge=INT32_MIN, le=INT32_MAX)]
        return {
            "string": str,
            "bool": bool,
            "int32": int32,
            "int64": Annotated[int, pydantic.Field(ge=INT64_MIN, le=INT64_MAX)],
            "float": float,
            "quantity": Annotated[str, pydantic.Field(pattern=QUANTITY_PATTERN)] | int | float,
            "time": Annotated[str, pydantic.Field(pattern=RFC3339_PATTERN)],
            "microtime": Annotated[str, pydantic.Field(pattern=RFC3339_MICRO_PATTERN)],
            "intorstring": int32 | str,
            "any": Any,
        }[node.kind]

    return build(struct_node(cls))


def _measure(fn: Callable[[], Any], *, rounds: int, target_s: float = 0.05, best: bool = False) -> float:
    """Median (or, with ``best``, lowest) µs per call over ``rounds`` rounds of about ``target_s`` each.

    The lowest round is the figure least disturbed by other load on the machine.
    """
    fn()
    n, start = 1, time.perf_counter()
    while time.perf_counter() - start < target_s / 10:
        fn()
        n += 1
    loops = max(1, int(n * 10))
    per_call = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(loops):
            fn()
        per_call.append((time.perf_counter() - t0) / loops * 1e6)
    return min(per_call) if best else statistics.median(per_call)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--best", action="store_true", help="report the fastest round instead of the median")
    args = parser.parse_args()

    cases: list[tuple[str, type[K8sStruct], dict[str, Any]]] = [
        ("Pod", core_v1.Pod, samples.pod()),
        ("ResourceClaim", resource_hub.ResourceClaim, samples.resource_claim()),
        ("ResourceSlice/128", resource_hub.ResourceSlice, samples.resource_slice(devices=128)),
    ]
    print(f"msgspec {msgspec.__version__}, pydantic {pydantic.VERSION}, python {sys.version.split()[0]}")
    header = (
        f"{'object':<18} {'bytes':>6} {'library':<9} {'decode µs':>10} {'encode µs':>10} {'total µs':>9} {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    for name, cls, obj in cases:
        body = orjson.dumps(_without_nulls(obj))
        expected = orjson.loads(body)
        decoder = msgspec.json.Decoder(cls)
        encoder = msgspec.json.Encoder()
        pmodel = pydantic_model(cls)

        # Correctness first: both reproduce the input exactly.
        assert orjson.loads(encoder.encode(decoder.decode(body))) == expected, f"msgspec round trip of {name}"
        dumped = pmodel.model_validate_json(body).model_dump_json(by_alias=True, exclude_none=True)
        assert orjson.loads(dumped) == expected, f"pydantic round trip of {name}"

        m_model = decoder.decode(body)
        p_model = pmodel.model_validate_json(body)
        results = {
            "msgspec": (
                _measure(partial(decoder.decode, body), rounds=args.rounds, best=args.best),
                _measure(partial(encoder.encode, m_model), rounds=args.rounds, best=args.best),
            ),
            "pydantic": (
                _measure(partial(pmodel.model_validate_json, body), rounds=args.rounds, best=args.best),
                _measure(
                    partial(p_model.model_dump_json, by_alias=True, exclude_none=True),
                    rounds=args.rounds,
                    best=args.best,
                ),
            ),
        }
        base = sum(results["msgspec"])
        for library, (dec, enc) in results.items():
            ratio = (dec + enc) / base
            print(f"{name:<18} {len(body):>6} {library:<9} {dec:>10.1f} {enc:>10.1f} {dec + enc:>9.1f} {ratio:>5.1f}x")


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


if __name__ == "__main__":
    main()
