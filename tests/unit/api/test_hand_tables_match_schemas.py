"""The few tables still written by hand beside the schema-driven code agree with Kubernetes' schemas.

Models, list types, map keys, merge keys, patch strategies, descriptions and
group-version-kinds are read from Kubernetes' schemas
(`services.api.types.schemas`; the models through ``ops/gen_models.py``).
What the published schemas do not carry is kept in small tables, and each is
cross-checked here against what the schemas do say:

- `patch_meta.KEY_DEFAULTS`, the defaults of map-list keys (the schemas drop
  OpenAPI ``default``): exactly the optional map-list keys of the served kinds
  whose Kubernetes description reads ``Defaults to "X"``, with that X;
- `patch_meta`'s zero objects and reset fields: every path names a field the
  kind's schema has;
- the resource.k8s.io rows of `ALL_MODELS`: exactly the kinds the generator
  was told to generate for each version (``ops.gen_models.MODULES``), each
  with the schema's group-version-kind;
- OpenAPI's shared scalar shapes (`openapi._SHARED_SHAPES`): definitions the
  schemas have, the scalars among them the ones the schema reader treats as
  scalars.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from ops import gen_models
from services.api.machinery.patch import patch_meta
from services.api.types import ALL_MODELS, definition_of
from services.api.types.schemas import SCALAR_DEFINITIONS, Schemas, schemas
from services.apiserver import openapi

RELEASES = ("1.31", "1.37")  # patch_meta's kinds are 1.31's, and 1.37's resource.k8s.io v1, v1beta2, v1beta1
# ContainerPort says 'Defaults to "TCP"', ServicePort 'Default is TCP.'
_DEFAULTS_TO = re.compile(r'Defaults to "([^"]+)"|Default is ([A-Za-z0-9]+)\.')


def _kind_definitions(defs: Schemas) -> list[str]:
    out = []
    for api_version, kind in patch_meta.kinds():
        if patch_meta.release_of(api_version) != defs.release:
            continue
        group, _, version = api_version.rpartition("/")
        out.append(defs.kind(group, version, kind).name)
    return out


def described_key_defaults(defs: Schemas) -> dict[str, dict[str, str]]:
    """Item definition → {map-list key: the default its description states}, over every served kind."""
    out: dict[str, dict[str, str]] = {}
    for name in defs.closure(_kind_definitions(defs)):
        for prop in defs.get(name).properties.values():
            item = prop.type.item
            if prop.type.kind != "array" or prop.list_type != "map" or item is None or item.kind != "ref":
                continue
            element = defs.get(item.ref)
            for key in prop.list_map_keys:
                if key in element.required or key not in element.properties:
                    continue
                found = _DEFAULTS_TO.search(element.properties[key].description)
                if found:
                    out.setdefault(item.ref, {})[key] = found.group(1) or found.group(2)
    return out


def test_map_list_key_defaults_are_the_ones_kubernetes_describes() -> None:
    described: dict[str, dict[str, str]] = {}
    for release in RELEASES:
        described.update(described_key_defaults(schemas(release)))
    assert {name: dict(keys) for name, keys in patch_meta.KEY_DEFAULTS.items()} == described
    assert described == {  # the cases today
        "io.k8s.api.core.v1.ContainerPort": {"protocol": "TCP"},
        "io.k8s.api.core.v1.ServicePort": {"protocol": "TCP"},
    }


def _paths(node: Any, prefix: str = "") -> list[str]:
    out = []
    if isinstance(node, dict):
        for key, value in node.items():
            path = f"{prefix}.{key}" if prefix else key
            out.append(path)
            out += _paths(value, path)
    return out


def _resolves(defs: Schemas, definition: str, path: str) -> bool:
    """Whether a dotted field path (``spec.devices.requests``) names fields of ``definition`` all the way."""
    current = definition
    parts = path.split(".")
    for i, part in enumerate(parts):
        prop = defs.get(current).properties.get(part)
        if prop is None:
            return False
        if i == len(parts) - 1:
            return True
        tp = prop.type
        if tp.kind != "ref":
            return False
        current = tp.ref
    return True


@pytest.mark.parametrize(("api_version", "kind"), patch_meta.kinds(), ids=[k for _, k in patch_meta.kinds()])
def test_zero_objects_and_reset_fields_name_fields_of_the_kind(api_version: str, kind: str) -> None:
    defs = schemas(patch_meta.release_of(api_version))
    schema = patch_meta.schema_for(api_version, kind)
    assert schema is not None
    paths = _paths(schema.zero_object())
    for subresource in ("", "status"):
        paths += list(schema.reset_fields(subresource))
    assert paths, kind
    missing = [p for p in paths if not _resolves(defs, schema.definition, p)]
    assert missing == [], f"{kind}: not fields of {schema.definition}"


@pytest.mark.parametrize(
    "spec", [m for m in gen_models.MODULES if m.module.startswith("resource_")], ids=lambda m: m.module
)
def test_model_rows_are_the_generated_kinds_with_the_schemas_gvks(spec: gen_models.ModuleSpec) -> None:
    defs = schemas(spec.release)
    want = {}
    for root in spec.roots:
        (gvk,) = defs.get(root).gvks
        want[(gvk.group, gvk.version, gvk.kind)] = root
    have = {
        key: definition_of(cls)
        for key, cls in ALL_MODELS.items()
        if key[0] == "resource.k8s.io" and key[1] == spec.prefix.rsplit(".", 2)[1]
    }
    assert have == want


def test_openapi_shared_shapes_are_schema_definitions() -> None:
    defs = schemas(RELEASES[0])
    assert all(name in defs for name in openapi._SHARED_SHAPES)
    scalars = {n for n, kind in SCALAR_DEFINITIONS.items() if kind in ("quantity", "intorstring", "time", "microtime")}
    assert scalars <= set(openapi._SHARED_SHAPES)
