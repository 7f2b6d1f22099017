"""Which API versions a running apiserver serves: the registry's versions minus ``--runtime-config``.

Why this module exists: kube-apiserver turns group-versions on and off with
``--runtime-config`` (k8s.io/apiserver/pkg/server/resourceconfig/helpers.go,
``MergeAPIResourceConfigs``); a disabled version is 404 at every URL and absent
from discovery and OpenAPI. Routing, discovery and OpenAPI read one
`ServedVersions` so they always agree.

Syntax, as kube-apiserver's: comma-separated ``key=value`` pairs, a bare key
meaning ``true``; keys ``api/all``, ``api/ga``, ``api/beta``, ``api/alpha``
(every version of that stability), ``<group>/<version>`` and ``v1`` (the core
group's). ``api/all`` applies first, then the stability keys, then single
versions. Every version draplane has is served by default. The core group
(``v1``) cannot be turned off: every component needs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.api.types import registry
from services.api.types.registry import CORE, ResourceType

__all__ = ["DEFAULT_SERVED", "RuntimeConfigError", "ServedVersions", "parse_runtime_config"]

_TRUE = frozenset({"1", "t", "T", "true", "TRUE", "True"})
_FALSE = frozenset({"0", "f", "F", "false", "FALSE", "False"})
_STABILITY = re.compile(r"^v\d+(?P<level>alpha|beta)?\d*$")


class RuntimeConfigError(ValueError):
    """A ``--runtime-config`` that names nothing served or holds a bad value."""


def _all_group_versions() -> tuple[tuple[str, str], ...]:
    return tuple(
        (g, v) for g in dict.fromkeys(r.group for r in registry.RESOURCES) for v in registry.served_versions(g)
    )


@dataclass(frozen=True, slots=True)
class ServedVersions:
    """The group-versions turned off; everything else the registry has is served."""

    disabled: frozenset[tuple[str, str]] = frozenset()

    def serves(self, group: str, version: str) -> bool:
        return (group, version) not in self.disabled and version in registry.served_versions(group)

    def versions(self, group: str) -> tuple[str, ...]:
        """The group's served versions, preferred first."""
        return tuple(v for v in registry.served_versions(group) if (group, v) not in self.disabled)

    def groups(self) -> tuple[str, ...]:
        """Groups with at least one served version, in registry order (core first)."""
        return tuple(g for g in dict.fromkeys(r.group for r in registry.RESOURCES) if self.versions(g))

    def serves_kind(self, rt: ResourceType, version: str) -> bool:
        return version in rt.versions and (rt.group, version) not in self.disabled

    def resources(self, group: str, version: str) -> tuple[ResourceType, ...]:
        """The kinds served at ``group/version``."""
        return tuple(r for r in registry.RESOURCES if r.group == group and self.serves_kind(r, version))


DEFAULT_SERVED = ServedVersions()


def parse_runtime_config(text: str) -> ServedVersions:
    """``--runtime-config`` in kube-apiserver's syntax (``resource.k8s.io/v1beta1=false,api/alpha=true``)."""
    pairs: list[tuple[str, bool]] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key, _, value = item.partition("=")
        if value == "" or value in _TRUE:
            on = True
        elif value in _FALSE:
            on = False
        else:
            raise RuntimeConfigError(
                f'invalid value of {key}: {value}, err: strconv.ParseBool: parsing "{value}": invalid syntax'
            )
        pairs.append((key.strip().strip("/"), on))
    every = _all_group_versions()
    enabled = dict.fromkeys(every, True)

    def level(version: str) -> str:
        m = _STABILITY.match(version)
        return (m.group("level") or "ga") if m else "ga"

    for rank in ("all", "stability", "single"):
        for key, on in pairs:
            if key == "api/all" and rank == "all":
                enabled = dict.fromkeys(every, on)
            elif key in ("api/ga", "api/beta", "api/alpha") and rank == "stability":
                for gv in every:
                    if level(gv[1]) == key.split("/")[1]:
                        enabled[gv] = on
            elif rank == "single" and key not in ("api/all", "api/ga", "api/beta", "api/alpha"):
                group, _, version = key.rpartition("/")
                gv = (CORE, "v1") if key == "api/legacy" else (group, version)
                if gv not in enabled:
                    raise RuntimeConfigError(f"unknown api groups {key}")
                enabled[gv] = on
    for gv, on in enabled.items():
        if gv[0] == CORE and not on:
            raise RuntimeConfigError("the core API (v1) cannot be disabled: every draplane component needs it")
    return ServedVersions(frozenset(gv for gv, on in enabled.items() if not on))
