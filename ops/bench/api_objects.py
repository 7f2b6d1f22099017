"""The write path's per-object cost at the API edge: decode + validate + encode.

Why this benchmark exists: every create/update passes through
`services.api.machinery.codec.decode_object` (strict decoding), defaulting, validation
and the JSON encode that goes into the log record, so their cost bounds the
committer's throughput. Objects: a DRA Pod, a ResourceClaim with every field,
and a ResourceSlice with 128 devices.

Validation is `services.api.admission.validation.validate_create(rt, obj)`.

Run: ``.venv/bin/python ops/bench/api_objects.py [--rounds N] [--best]``. Prints the
median µs per object of several rounds, and the cost of the slow path (a body
with an unknown field, under fieldValidation=Warn) relative to the fast path.

A second table compares the two wire formats a response or watch event may
take: JSON (orjson) and Kubernetes' protobuf (`services.api.protobuf`, with
its envelope), encode and decode µs per object and their sizes.

A third is the watch fan-out: ``--watchers`` N watchers each sent ``--events``
M changed Pods (each a new resourceVersion), µs per event for all N, when every
watcher encodes its own frame and when the apiserver's kept encoding
(`services.apiserver.encoded_objects`) is encoded once and framed N times.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import orjson

from services.api import protobuf
from services.api.admission.defaults import apply_defaults
from services.api.admission.validation import validate_create
from services.api.machinery.codec import decode_object, encode_object
from services.api.types import registry
from services.apiserver.encoded_objects import Encoded, EncodedObjects
from tests.support import samples

Validate = Callable[[registry.ResourceType, dict[str, Any]], list[Any]]


def _measure(fn: Callable[[], Any], *, rounds: int, target_s: float = 0.05, best: bool = False) -> float:
    """Median (or, with ``best``, lowest) µs per call over ``rounds`` rounds of about ``target_s`` each.

    The lowest round is the figure least disturbed by other load on the machine.
    """
    fn()
    n, start = 1, time.perf_counter()
    while time.perf_counter() - start < target_s / 10:
        fn()
        n += 1
    loops = max(1, n * 10)
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
    parser.add_argument("--watchers", type=int, default=20, help="watchers in the fan-out case")
    parser.add_argument("--events", type=int, default=50, help="changed objects in the fan-out case")
    parser.add_argument("--only-wire", action="store_true", help="only the wire-format and fan-out tables")
    args = parser.parse_args()
    validate: Validate = validate_create
    note = "validation: services.api.admission.validation.validate_create"

    cases = [
        ("Pod", registry.by_kind("", "Pod"), samples.pod()),
        ("ResourceClaim", registry.by_kind("resource.k8s.io", "ResourceClaim"), samples.resource_claim()),
        ("ResourceSlice/128", registry.by_kind("resource.k8s.io", "ResourceSlice"), samples.resource_slice()),
    ]
    if not args.only_wire:
        _edge_costs(cases, validate=validate, note=note, rounds=args.rounds, best=args.best)
    _wire_formats([(name, obj) for name, _, obj in cases], rounds=args.rounds, best=args.best)
    _fan_out(samples.pod(), watchers=args.watchers, events=args.events, rounds=args.rounds, best=args.best)


def _edge_costs(
    cases: list[tuple[str, registry.ResourceType | None, dict[str, Any]]],
    *,
    validate: Validate,
    note: str,
    rounds: int,
    best: bool,
) -> None:
    """Decode, defaulting, validation and encode of the write path, µs per object."""
    print(note)
    header = (
        f"{'object':<18} {'bytes':>6} {'decode':>8} {'default':>8} {'validate':>9} {'encode':>8} {'total':>8}"
        f" {'slow path':>10}"
    )
    print(header + "   (µs per object; slow path = decode of a body with one unknown field, Warn)")
    print("-" * len(header))
    for name, rt, obj in cases:
        assert rt is not None
        body = orjson.dumps(obj)
        decoded, _ = decode_object(rt, body)
        final = copy.deepcopy(decoded)
        apply_defaults(rt, final)

        t_decode = _measure(partial(decode_object, rt, body), rounds=rounds, best=best)
        # Defaulting is idempotent: re-running it on a defaulted object walks the same fields.
        t_default = _measure(partial(apply_defaults, rt, final), rounds=rounds, best=best)
        t_validate = _measure(partial(validate, rt, final), rounds=rounds, best=best)
        t_encode = _measure(partial(encode_object, final), rounds=rounds, best=best)

        unknown = copy.deepcopy(obj)
        unknown["metadata"]["unexpectedField"] = True
        slow = partial(decode_object, rt, orjson.dumps(unknown), field_validation="Warn")
        t_slow = _measure(slow, rounds=rounds, best=best)
        total = t_decode + t_default + t_encode + t_validate
        validate_text = f"{t_validate:>9.1f}"
        print(
            f"{name:<18} {len(body):>6} {t_decode:>8.1f} {t_default:>8.1f} {validate_text} {t_encode:>8.1f}"
            f" {total:>8.1f} {t_slow:>8.1f} ({t_slow / t_decode:.1f}x)"
        )


def _wire_formats(cases: list[tuple[str, dict[str, Any]]], *, rounds: int, best: bool) -> None:
    """JSON (orjson) against Kubernetes' protobuf, both directions, µs per object."""
    print()
    header = (
        f"{'object':<18} {'json B':>7} {'pb B':>7} {'json enc':>9} {'pb enc':>8} {'json dec':>9} {'pb dec':>8}"
        f" {'pb/json enc':>12} {'pb/json dec':>12}"
    )
    print(header + "   (µs per object; pb = services.api.protobuf with its envelope)")
    print("-" * len(header))
    for name, obj in cases:
        body, pb = orjson.dumps(obj), protobuf.encode(obj)
        j_enc = _measure(partial(orjson.dumps, obj), rounds=rounds, best=best)
        p_enc = _measure(partial(protobuf.encode, obj), rounds=rounds, best=best)
        j_dec = _measure(partial(orjson.loads, body), rounds=rounds, best=best)
        p_dec = _measure(partial(protobuf.decode, pb), rounds=rounds, best=best)
        print(
            f"{name:<18} {len(body):>7} {len(pb):>7} {j_enc:>9.1f} {p_enc:>8.1f} {j_dec:>9.1f} {p_dec:>8.1f}"
            f" {p_enc / j_enc:>11.0f}x {p_dec / j_dec:>11.0f}x"
        )


def _fan_out(pod: dict[str, Any], *, watchers: int, events: int, rounds: int, best: bool) -> None:
    """N watchers x M events: every watcher encoding its frame, against one kept encoding per object version."""
    versions = []
    for i in range(events):
        obj = copy.deepcopy(pod)
        obj["metadata"]["resourceVersion"] = str(1000 + i)
        versions.append(obj)

    def per_watcher(fmt: str) -> None:
        for obj in versions:
            for _ in range(watchers):
                if fmt == "json":
                    orjson.dumps({"type": "MODIFIED", "object": obj})
                else:
                    protobuf.encode_watch_frame("MODIFIED", obj)

    def kept(fmt: str) -> None:
        cache = EncodedObjects()  # fresh each round: every version is encoded once, then framed per watcher
        for obj in versions:
            meta = obj["metadata"]
            key = ("", "v1", "", "pods", meta["namespace"], meta["name"], meta["resourceVersion"], "object", fmt)
            make = partial(_kept_encoding, obj, fmt)
            for _ in range(watchers):
                e = cache.get(key, make)
                if fmt == "json":
                    b"".join((b'{"type":"', b"MODIFIED", b'","object":', e.data, b"}\n"))
                else:
                    protobuf.watch_frame("MODIFIED", protobuf.enveloped(e.data, api_version="v1", kind="Pod"))

    print()
    print(f"watch fan-out: {watchers} watchers x {events} Pod events, µs per event (all watchers)")
    figures = {}
    for how, fn in (("per watcher", per_watcher), ("kept", kept)):
        for fmt in ("json", "protobuf"):
            times = []
            for _ in range(max(2, rounds // 2)):  # one call is N x M events already
                t0 = time.perf_counter()
                fn(fmt)
                times.append((time.perf_counter() - t0) / events * 1e6)
            figures[how, fmt] = min(times) if best else statistics.median(times)
    base = figures["per watcher", "json"]
    for (how, fmt), us in figures.items():
        print(f"  {how:<12} {fmt:<9} {us:>10.1f} µs  ({us / base:.2f}x orjson per watcher)")


def _kept_encoding(obj: dict[str, Any], fmt: str) -> Encoded:
    data = orjson.dumps(obj) if fmt == "json" else protobuf.encode_message(obj)
    return Encoded(obj["apiVersion"], obj["kind"], data)


if __name__ == "__main__":
    main()
