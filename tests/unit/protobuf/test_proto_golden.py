"""The protobuf codec against Kubernetes' own serializer: golden vectors written by Go.

``ops/proto_vectors.py`` had k8s.io/apimachinery's protobuf serializer (at the
k8s.io/api release whose pool the codec picks) encode every object of
`tests.support.proto_corpus` — every kind draplane serves at every served
version, once with every field set and once realistic, their lists, and the
meta.k8s.io kinds — and recorded Go's bytes, its watch frame and Go's JSON of
the object it decodes from those bytes. Go's marshaller writes fields in
field-number order and map entries sorted, so our bytes must be *equal*.
"""

from __future__ import annotations

import base64
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from services.api import protobuf
from services.api.protobuf.pools import pool_for
from tests.support import proto_corpus

DATA = Path(__file__).resolve().parents[2] / "data" / "protobuf"


@cache
def vectors() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(DATA.glob("golden-*.json")):
        doc = json.loads(path.read_text())
        out += [(doc["k8s.io/api"], v) for v in doc["vectors"]]
    return out


IDS = [v["name"] for _, v in vectors()]


@pytest.mark.parametrize(("release", "vector"), vectors(), ids=IDS)
def test_go_bytes_decode_to_gos_json(release: str, vector: dict[str, Any]) -> None:
    assert protobuf.decode(base64.b64decode(vector["proto"])) == vector["json"]


@pytest.mark.parametrize(("release", "vector"), vectors(), ids=IDS)
def test_our_bytes_equal_gos(release: str, vector: dict[str, Any]) -> None:
    assert protobuf.encode(vector["json"]) == base64.b64decode(vector["proto"])
    # The pool the vectors were written for is the one the codec picks.
    found = pool_for(vector["json"]["apiVersion"], vector["json"]["kind"])
    assert found is not None and found[0].release == release


@pytest.mark.parametrize(("release", "vector"), vectors(), ids=IDS)
def test_we_write_the_input_as_go_does(release: str, vector: dict[str, Any]) -> None:
    """The object as draplane holds it (fields left out, nulls, raw JSON), encoded by us, is byte for byte what Go's
    serializer made of the same JSON — so Go decodes our bytes as it decodes that JSON."""
    assert protobuf.encode(vector["input"]) == base64.b64decode(vector["proto"])
    assert protobuf.decode(protobuf.encode(vector["input"])) == vector["json"]


@pytest.mark.parametrize(("release", "vector"), vectors(), ids=IDS)
def test_watch_frames_equal_gos(release: str, vector: dict[str, Any]) -> None:
    frame = base64.b64decode(vector["frame"])
    assert protobuf.encode_watch_frame("ADDED", vector["json"]) == frame
    assert protobuf.decode_watch_frames(frame) == ([("ADDED", vector["json"])], b"")


def test_vectors_cover_every_served_kind_at_every_version() -> None:
    names = {v["name"] for _, v in vectors()}
    for group, version, kind in proto_corpus.served():
        stem = f"{group or 'core'}.{version}.{kind}"
        assert f"{stem}.every-field" in names, stem
        assert f"{stem}.sample" in names, stem
        assert f"{stem}.list" in names, stem


def test_vectors_are_those_of_todays_corpus() -> None:
    """A corpus change needs fresh vectors (``.venv/bin/python -m ops.proto_vectors``)."""
    stored = {v["name"]: v["input"] for _, v in vectors()}
    assert stored == dict(proto_corpus.objects())
