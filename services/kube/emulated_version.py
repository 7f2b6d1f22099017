"""``--emulated-version``: the Kubernetes release whose feature gates (and ``/version`` emulation) a component uses.

Why this module exists: every draplane component — apiserver, scheduler,
controller-manager, driver, node agent, ``draplane up`` — must agree on one
release, and the flag is kube-apiserver's (k8s.io/component-base/compatibility,
``componentGlobalsRegistry``): ``--emulated-version=1.31`` or
``--emulated-version=kube=1.31``; the component defaults to ``kube``; the
format is major.minor only (``patch version not allowed, got: kube=1.31.2``);
a component named twice is ``duplicate version flag, kube=1.31 and kube=1.37``;
another component is ``component not registered: wardle``.

draplane is a 1.37 binary that can also behave as 1.31 (the seeds' release),
and nothing in between: a release it does not have is refused in one line,
``emulation version 1.33 is not one of [1.31, 1.37]`` (Kubernetes accepts a
range, ``emulation version 1.30 is not between [1.34, 1.37]``).
"""

from __future__ import annotations

import re

from services.kube.feature_gates_table import DEFAULT_RELEASE, RELEASES

__all__ = ["BINARY_RELEASE", "COMPONENT", "EmulatedVersionError", "flag_help", "parse_emulated_version"]

COMPONENT = "kube"
BINARY_RELEASE = RELEASES[-1]
"""The release draplane is built as (``/version``'s ``major``/``minor``); it can emulate any of `RELEASES`."""

# apimachinery's util/version: an optional "v", dotted numbers, then anything (refused below).
_VERSION = re.compile(r"^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)$")


class EmulatedVersionError(ValueError):
    """An ``--emulated-version`` value kube would refuse, in kube's words."""

    def flag_error(self, value: str) -> str:
        return f'invalid argument "{value}" for "--emulated-version" flag: {self}'


def flag_help() -> str:
    """The flag's help, kube's wording with draplane's releases."""
    return (
        "the Kubernetes release whose behaviour (feature gates, /version's emulation) to emulate, "
        "kube-apiserver's syntax: major.minor, e.g. --emulated-version=1.31 or --emulated-version=kube=1.31; "
        f"options are: {COMPONENT}={'|'.join(RELEASES)} (default: {DEFAULT_RELEASE}; 1.31 is the seeds' release)"
    )


def parse_emulated_version(value: str) -> str:
    """The release ``value`` names (one of `RELEASES`); empty means `DEFAULT_RELEASE`."""
    chosen: dict[str, str] = {}
    for item in (part for part in value.split(",") if part.strip()):
        component, text = COMPONENT, item
        if "=" in item:
            component, _, text = item.partition("=")
            component, text = component.strip(), text.strip()
        numbers = _numbers(text)
        if component != COMPONENT:
            raise EmulatedVersionError(f"component not registered: {component}")
        if len(numbers) > 2 and numbers[2] != 0:
            raise EmulatedVersionError(f"patch version not allowed, got: {component}={'.'.join(map(str, numbers))}")
        release = f"{numbers[0]}.{numbers[1]}"
        if component in chosen:
            raise EmulatedVersionError(
                f"duplicate version flag, {component}={chosen[component]} and {component}={release}"
            )
        chosen[component] = release
    release = chosen.get(COMPONENT, DEFAULT_RELEASE)
    if release not in RELEASES:
        raise EmulatedVersionError(f"emulation version {release} is not one of [{', '.join(RELEASES)}]")
    return release


def _numbers(text: str) -> list[int]:
    match = _VERSION.match(text)
    if match is None:
        raise EmulatedVersionError(f'could not parse "{text}" as version')
    parts, extra = match.group(1).split("."), match.group(2)
    if len(parts) < 2:
        raise EmulatedVersionError(f'illegal version string "{text}"')
    if extra.strip():
        raise EmulatedVersionError(f'could not parse pre-release/metadata ({extra}) in version "{text}"')
    for part in parts:
        if len(part) > 1 and part.startswith("0"):
            raise EmulatedVersionError(f'illegal zero-prefixed version component "{part}" in "{text}"')
    return [int(part) for part in parts]
