"""Every kind written in every version reads back equal in every other version, 1.31-only fields included.

The property (issue 14): an object written through version A is stored in the
hub form; read through version B and written back through B (with
`keep_unrepresentable`, as the committer will on an update), the stored
object is unchanged; and read through A again it equals what was written.
Objects are drawn from the generated models of each version
(`model_objects`), so every field of every version takes part.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.api.machinery.conversion import from_internal, keep_unrepresentable, to_internal
from services.api.machinery.conversions.table import GROUP, VERSIONS_OF
from services.api.types import resource_v1, resource_v1alpha3, resource_v1beta1, resource_v1beta2
from services.api.types.resource_hub import HUB_MODELS
from tests.unit.api.model_objects import objects

MODULES = {"v1": resource_v1, "v1beta2": resource_v1beta2, "v1beta1": resource_v1beta1, "v1alpha3": resource_v1alpha3}
CASES = [(kind, a, b) for kind, versions in VERSIONS_OF.items() for a in versions for b in versions]


def _hub(obj: dict[str, Any], kind: str, version: str) -> dict[str, Any]:
    return to_internal(obj, group=GROUP, kind=kind, version=version)


def _read(hub: dict[str, Any], kind: str, version: str) -> dict[str, Any]:
    return from_internal(hub, group=GROUP, kind=kind, version=version)


def _without_api_version(obj: dict[str, Any]) -> dict[str, Any]:
    # The hub form is never on the wire: its apiVersion is whatever the writer had (the committer stamps it).
    return {k: v for k, v in obj.items() if k != "apiVersion"}


def test_every_kind_has_a_version_pair() -> None:
    assert set(VERSIONS_OF) == set(HUB_MODELS)
    assert VERSIONS_OF["ResourceClaim"] == ("v1", "v1beta2", "v1beta1", "v1alpha3")
    assert VERSIONS_OF["DeviceTaintRule"] == ("v1", "v1beta2")
    assert VERSIONS_OF["PodSchedulingContext"] == ("v1alpha3",)


@pytest.mark.parametrize(("kind", "written", "read"), CASES, ids=[f"{k}-{a}-{b}" for k, a, b in CASES])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_write_in_one_version_read_and_update_in_another(
    kind: str, written: str, read: str, data: st.DataObject
) -> None:
    model = getattr(MODULES[written], kind)
    obj = data.draw(objects(model, api_version=f"{GROUP}/{written}", kind=kind))
    # The written object is typed as its version's model says.
    msgspec.convert(obj, model)

    stored = _hub(obj, kind, written)
    msgspec.convert(stored, HUB_MODELS[kind])  # a valid hub object
    assert _read(stored, kind, written) == obj  # written and read in one version: the same object

    seen = _read(stored, kind, read)
    msgspec.convert(seen, getattr(MODULES[read], kind))  # a valid object of the version read
    assert seen["apiVersion"] == f"{GROUP}/{read}"

    # Updated through the other version without changes: the stored object is unchanged,
    # fields that version cannot express (1.31's classic fields, 1.37's new ones) included.
    updated = keep_unrepresentable(_hub(seen, kind, read), stored, group=GROUP, kind=kind, version=read)
    assert _without_api_version(updated) == _without_api_version(stored)
    assert _read(updated, kind, written) == obj
