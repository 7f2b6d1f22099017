"""Validation accepts every valid object the models can produce, and so does the running server.

`tests.fuzz.valid_objects` draws typed model instances of every kind with
values inside Kubernetes' rules. Their wire form must pass `validate_create`
with no error, decode through the strict codec unchanged, and — sent to the
REST API of a running stack — be created (201) with its name and kind.
"""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.api.admission.validation import validate_create
from services.api.machinery.codec import decode_object, from_model
from tests.fuzz.fuzz_support import CASES, KINDS, NS, FuzzApi, collection_path, fuzz_settings, rt_of
from tests.fuzz.mutations import unique_name, yaml_dumps
from tests.fuzz.valid_objects import VALID_OBJECTS


def _wire(kind: str, model: object) -> dict[str, object]:
    rt = rt_of(kind)
    return {"apiVersion": rt.api_version, "kind": kind, **from_model(model)}  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", KINDS)
@fuzz_settings(70)
@given(data=st.data())
def test_validation_accepts_every_valid_object_the_models_can_produce(kind: str, data: st.DataObject) -> None:
    CASES["valid object: validate_create"] += 1
    rt = rt_of(kind)
    obj = _wire(kind, data.draw(VALID_OBJECTS[kind](), label="object"))
    assert [str(e) for e in validate_create(rt, obj)] == []
    decoded, warnings = decode_object(rt, orjson.dumps(obj))
    assert (decoded, warnings) == (obj, [])


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("kind", KINDS)
@fuzz_settings(25)
@given(data=st.data())
async def test_the_server_creates_every_valid_object(api: FuzzApi, kind: str, data: st.DataObject) -> None:
    rt = rt_of(kind)
    obj = _wire(kind, data.draw(VALID_OBJECTS[kind](st.just(NS)), label="object"))
    name = unique_name("valid")
    obj["metadata"] = {**obj["metadata"], "name": name}  # type: ignore[dict-item]
    as_yaml = data.draw(st.booleans(), label="yaml")
    body = yaml_dumps(obj) if as_yaml else None
    answer = await api.send(
        "valid object: create",
        "POST",
        collection_path(rt),
        body=body or orjson.dumps(obj),
        content_type="application/yaml" if body else "application/json",
        query="fieldValidation=Strict",
    )
    assert answer.status == 201, answer.describe()
    assert answer.doc["kind"] == kind and answer.doc["metadata"]["name"] == name
