"""The message classes of Kubernetes' API, one descriptor pool per k8s.io/api release.

Why this module exists: the same full message name can mean different
messages in two releases (``k8s.io.api.resource.v1alpha3.ResourceClaim``
exists at 1.31 and is gone at 1.37), so each release's ``generated.proto``
files are loaded into a pool of their own, from the descriptor sets
``ops/gen_proto.py`` compiled (``descriptors/manifest.json``, newest release
first). A kind is encoded with the newest pool that has its message; field
numbers never change between releases.

Beside each descriptor set lies the release's field table: per message, each
field's JSON name, ``omitempty``, ``omitzero`` and how the Go struct holds it (a value
always on the wire, a pointer, a list, a map, ...), read from the Go structs'
tags by ``ops/gen_proto.py``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor

DESCRIPTORS = Path(__file__).resolve().parent / "descriptors"


@dataclass(frozen=True, slots=True)
class GoField:
    """One protobuf field of a Go struct, as ``ops/gen_proto.py``'s table has it."""

    number: int
    json: str  # "" for an embedded struct whose fields Go's JSON inlines
    omitempty: bool
    omitzero: bool  # Go 1.24's omitzero: a zero value (a zero struct, a zero metav1.Time) is left out
    hold: str  # value | pointer | list | map | bytes | wrapped
    map_value: str  # for a map: value | wrapped


@dataclass(frozen=True, slots=True)
class Pool:
    """One k8s.io/api release's messages and Go field tables."""

    release: str
    pool: descriptor_pool.DescriptorPool
    fields: dict[str, tuple[GoField, ...]]

    def descriptor(self, full_name: str) -> Descriptor | None:
        try:
            return self.pool.FindMessageTypeByName(full_name)
        except KeyError:
            return None

    def message_class(self, full_name: str) -> Any:
        desc = self.descriptor(full_name)
        if desc is None:
            raise KeyError(full_name)
        return message_factory.GetMessageClass(desc)


def _load_pool(entry: dict[str, Any]) -> Pool:
    files = descriptor_pb2.FileDescriptorSet.FromString((DESCRIPTORS / entry["descriptors"]).read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    raw: dict[str, list[dict[str, Any]]] = json.loads((DESCRIPTORS / entry["fields"]).read_text())
    fields = {
        name: tuple(
            GoField(
                number=f["num"],
                json=f["json"],
                omitempty=bool(f.get("omitempty")),
                omitzero=bool(f.get("omitzero")),
                hold=f["hold"],
                map_value=f.get("mapValue", ""),
            )
            for f in table
        )
        for name, table in raw.items()
    }
    return Pool(release=entry["k8s.io/api"], pool=pool, fields=fields)


@functools.cache
def pools() -> tuple[Pool, ...]:
    """Every release's pool, newest first (loaded once, on first use)."""
    manifest = json.loads((DESCRIPTORS / "manifest.json").read_text())
    return tuple(_load_pool(entry) for entry in manifest["pools"])


# Kinds of meta.k8s.io/v1 that Kubernetes sends under any group's apiVersion (Status is "v1", Status).
_META_EVERYWHERE = frozenset(
    {"Status", "WatchEvent", "DeleteOptions", "APIGroupList", "APIGroup", "APIResourceList", "APIVersions"}
)
META_V1 = "k8s.io.apimachinery.pkg.apis.meta.v1"


def message_name(api_version: str, kind: str) -> str | None:
    """The full protobuf message name of an apiVersion/kind, by Kubernetes' package naming (no pool consulted)."""
    if not kind:
        return None
    group, _, version = api_version.rpartition("/")
    if not version:
        return None
    if kind in _META_EVERYWHERE:
        return f"{META_V1}.{kind}"
    if group == "meta.k8s.io":
        return f"k8s.io.apimachinery.pkg.apis.meta.{version}.{kind}"
    if group == "":
        package = "core"
    elif "." not in group:
        package = group
    elif group.endswith(".k8s.io") and group.count(".") == 2:
        package = group.removesuffix(".k8s.io")
    else:
        return None
    return f"k8s.io.api.{package}.{version}.{kind}"


# Bounded: the names come from request bodies.
@functools.lru_cache(maxsize=1024)
def pool_for(api_version: str, kind: str) -> tuple[Pool, str] | None:
    """The newest pool that has the kind's message, and the message's name; None when no release has it."""
    name = message_name(api_version, kind)
    if name is None:
        return None
    for pool in pools():
        if name in pool.fields and pool.descriptor(name) is not None:
            return pool, name
    return None
