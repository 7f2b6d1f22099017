"""The lock files: exact versions of every distribution draplane installs, read and written.

``ops/ensure-venv`` installs ``requirements.lock`` (the runtime dependencies)
or ``requirements-test.lock`` (with the ``test`` extras) before the project
itself with ``--no-deps``, so every clone — and the image ``ops/Dockerfile``
builds — gets the same versions. ``ops/lock`` refreshes both: it resolves
pyproject.toml's dependencies in a throwaway venv and runs this module's
``write`` there, which pins what that venv holds. The runtime lock is the part
of the test lock that the runtime dependencies reach, so the two never
disagree on a version.

Pins are for the interpreter ``ops/ensure-venv`` uses (CPython 3.11 on Linux):
environment markers are evaluated for the interpreter that wrote them.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import platform
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Protocol

from packaging.requirements import Requirement

PROJECT = "draplane"
# Installed by venv itself or by pip's build isolation, never by a requirement of ours.
NOT_PINNED = frozenset({"pip", "setuptools", "wheel"})
RUNTIME_LOCK = "requirements.lock"
TEST_LOCK = "requirements-test.lock"


def canonical(name: str) -> str:
    """PEP 503's normalized name: ``PyYAML`` and ``pyyaml``, ``typing_extensions`` and ``typing-extensions`` match."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse(text: str) -> dict[str, str]:
    """A lock file's pins, canonical name → version; comments and blank lines are skipped."""
    pins: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if not sep or not name.strip() or not version.strip():
            raise ValueError(f"line {number}: {raw!r} is not NAME==VERSION")
        pins[canonical(name.strip())] = version.strip()
    return pins


def render(pins: Mapping[str, str], *, what: str) -> str:
    """A lock file's text: a header saying where it comes from, then one ``name==version`` a line, sorted."""
    python = f"{platform.python_implementation()} {platform.python_version()} on {sys.platform}"
    header = [
        f"# {what}: exact versions for ops/ensure-venv and ops/Dockerfile.",
        f"# Written by ops/lock from pyproject.toml ({python}); do not edit by hand.",
    ]
    return "\n".join([*header, *(f"{name}=={pins[name]}" for name in sorted(pins))]) + "\n"


class Installed(Protocol):
    """What the lock needs of an installed distribution (``importlib.metadata.Distribution`` has it)."""

    @property
    def version(self) -> str: ...

    @property
    def requires(self) -> list[str] | None: ...


def requirements_of(dist: Installed) -> list[Requirement]:
    return [Requirement(text) for text in dist.requires or ()]


def applies(requirement: Requirement, *, extras: Iterable[str]) -> bool:
    """Whether a requirement holds on this interpreter with these extras of its owner asked for."""
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in ("", *extras))


def closure(roots: Iterable[Requirement], *, installed: Mapping[str, Installed]) -> set[str]:
    """Canonical names of every distribution that ``roots`` reach through ``installed``'s metadata.

    A requirement that names a distribution missing from ``installed`` is
    reported: the venv the pins come from did not resolve it.
    """
    reached: set[str] = set()
    asked: set[tuple[str, frozenset[str]]] = set()
    pending = list(roots)
    while pending:
        requirement = pending.pop()
        name = canonical(requirement.name)
        extras = frozenset(requirement.extras)
        if (name, extras) in asked:
            continue
        asked.add((name, extras))
        if name not in installed:
            raise LookupError(f"{requirement} is required but {name} is not installed")
        reached.add(name)
        for child in requirements_of(installed[name]):
            if applies(child, extras=extras):
                pending.append(child)
    return reached


def installed_distributions() -> dict[str, Installed]:
    """Every distribution this interpreter sees, by canonical name (the first on sys.path wins, as for imports)."""
    found: dict[str, Installed] = {}
    for dist in importlib.metadata.distributions():
        found.setdefault(canonical(dist.metadata["Name"]), dist)
    return found


def project_requirements(installed: Mapping[str, Installed], *, extras: Iterable[str]) -> list[Requirement]:
    """draplane's own requirements (as installed) that hold with ``extras``."""
    wanted = tuple(extras)
    return [r for r in requirements_of(installed[PROJECT]) if applies(r, extras=wanted)]


def locks(installed: Mapping[str, Installed]) -> tuple[dict[str, str], dict[str, str]]:
    """(runtime pins, test pins) from an environment with ``draplane[test]`` installed."""
    if PROJECT not in installed:
        raise LookupError(f"{PROJECT} is not installed in {sys.prefix}")

    def pins(names: set[str]) -> dict[str, str]:
        return {name: installed[name].version for name in names - NOT_PINNED - {PROJECT}}

    runtime = closure(project_requirements(installed, extras=()), installed=installed)
    test = closure(project_requirements(installed, extras=("test",)), installed=installed)
    return pins(runtime), pins(test)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("command", choices=["write"])
    parser.add_argument("--into", type=Path, default=Path.cwd(), help="directory of the lock files (the repository)")
    args = parser.parse_args(argv)
    runtime, test = locks(installed_distributions())
    (args.into / RUNTIME_LOCK).write_text(render(runtime, what="draplane's runtime dependencies"))
    (args.into / TEST_LOCK).write_text(render(test, what="draplane's dependencies with the test extras"))
    print(f"ops/lock: {len(runtime)} runtime pins in {RUNTIME_LOCK}, {len(test)} in {TEST_LOCK}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
