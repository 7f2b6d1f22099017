"""Semantic versions as the DRA CEL library parses and orders them.

Kubernetes' DRA selector library (``k8s.io/dynamic-resource-allocation/cel``)
parses ``semver("1.2.3")`` and version attributes with
``github.com/blang/semver/v4.Parse``: strict ``MAJOR.MINOR.PATCH[-PRE][+BUILD]``,
no leading zeroes, and ordering per semver 2.0.0 (build metadata ignored).
This module reproduces that parser, its error messages and its ordering.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

_NUMBERS = frozenset("0123456789")
_ALPHANUMERIC = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")
_UINT64_MAX = 2**64 - 1


class SemverError(ValueError):
    """A string is not a valid semantic version."""


@dataclass(frozen=True, slots=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = ()

    def canonical(self) -> str:
        """The version without build metadata: equal versions have equal strings."""
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(p) for p in self.pre)
        return text


def _only(text: str, allowed: frozenset[str]) -> bool:
    return all(c in allowed for c in text)


def _uint(text: str) -> int:
    # strconv.ParseUint's errors, as Go prints them.
    if not text:
        raise SemverError(f'strconv.ParseUint: parsing "{text}": invalid syntax')
    value = int(text)
    if value > _UINT64_MAX:
        raise SemverError(f'strconv.ParseUint: parsing "{text}": value out of range')
    return value


def _number(text: str, what: str) -> int:
    if not _only(text, _NUMBERS):
        raise SemverError(f'Invalid character(s) found in {what} number "{text}"')
    if len(text) > 1 and text[0] == "0":
        raise SemverError(f'{what.capitalize()} number must not contain leading zeroes "{text}"')
    return _uint(text)


def _prerelease(text: str) -> int | str:
    if not text:
        raise SemverError("Prerelease is empty")
    if _only(text, _NUMBERS):
        if len(text) > 1 and text[0] == "0":
            raise SemverError(f'Numeric PreRelease version must not contain leading zeroes "{text}"')
        return _uint(text)
    if _only(text, _ALPHANUMERIC):
        return text
    raise SemverError(f'Invalid character(s) found in prerelease "{text}"')


@lru_cache(maxsize=4096)
def parse(text: str) -> Version:
    """Parse like ``semver.Parse``; raises `SemverError` with its message."""
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major")
    minor = _number(parts[1], "minor")
    patch_text = parts[2]
    build: list[str] = []
    pre: list[int | str] = []
    if "+" in patch_text:
        patch_text, build_text = patch_text.split("+", 1)
        build = build_text.split(".")
    if "-" in patch_text:
        patch_text, pre_text = patch_text.split("-", 1)
        pre = [_prerelease(p) for p in pre_text.split(".")]
    patch = _number(patch_text, "patch")
    for item in build:
        if not item:
            raise SemverError("Build meta data is empty")
        if not _only(item, _ALPHANUMERIC):
            raise SemverError(f'Invalid character(s) found in build meta data "{item}"')
    return Version(major, minor, patch, tuple(pre), tuple(build))


def is_semver(text: str) -> bool:
    try:
        parse(text)
    except SemverError:
        return False
    return True


def _compare_pre(a: int | str, b: int | str) -> int:
    if isinstance(a, int) and isinstance(b, int):
        return (a > b) - (a < b)
    if isinstance(a, int):
        return -1
    if isinstance(b, int):
        return 1
    return (a > b) - (a < b)


def compare(a: Version, b: Version) -> int:
    """-1, 0 or 1, ordering as semver 2.0.0 (``Version.Compare``)."""
    for mine, theirs in ((a.major, b.major), (a.minor, b.minor), (a.patch, b.patch)):
        if mine != theirs:
            return 1 if mine > theirs else -1
    if not a.pre and not b.pre:
        return 0
    if not a.pre:
        return 1
    if not b.pre:
        return -1
    for x, y in zip(a.pre, b.pre, strict=False):
        c = _compare_pre(x, y)
        if c:
            return c
    return (len(a.pre) > len(b.pre)) - (len(a.pre) < len(b.pre))
