"""The lock files cover pyproject.toml, agree with each other, and are what ``ops/ensure-venv`` installed.

``requirements.lock`` and ``requirements-test.lock`` (written by ``ops/lock``)
are what a fresh clone installs. A dependency added to pyproject.toml without
refreshing them, a bound the pin no longer meets, or a venv that was not
installed from them fails here — not on someone else's machine later.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from ops.lockfile import (
    PROJECT,
    RUNTIME_LOCK,
    TEST_LOCK,
    Installed,
    canonical,
    closure,
    installed_distributions,
    locks,
    parse,
    render,
)

REPO = Path(__file__).resolve().parents[1]


def declared(*, extras: tuple[str, ...]) -> list[Requirement]:
    """pyproject.toml's dependencies, with those of ``extras``."""
    with (REPO / "pyproject.toml").open("rb") as f:
        project: dict[str, Any] = tomllib.load(f)["project"]
    texts: list[str] = list(project["dependencies"])
    for extra in extras:
        texts += project["optional-dependencies"][extra]
    return [Requirement(text) for text in texts]


def pins(lock: str) -> dict[str, str]:
    return parse((REPO / lock).read_text())


@pytest.mark.parametrize(("lock", "extras"), [(RUNTIME_LOCK, ()), (TEST_LOCK, ("test",))])
def test_every_dependency_pyproject_names_is_pinned_at_a_version_it_allows(lock: str, extras: tuple[str, ...]) -> None:
    pinned = pins(lock)
    for requirement in declared(extras=extras):
        name = canonical(requirement.name)
        assert name in pinned, f"{requirement} is in pyproject.toml but not in {lock}: run ops/lock --keep"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"{lock} pins {name}=={pinned[name]}, outside pyproject.toml's {requirement}: run ops/lock"
        )


def test_the_runtime_lock_is_the_test_lock_cut_to_what_the_runtime_dependencies_reach() -> None:
    runtime, test = pins(RUNTIME_LOCK), pins(TEST_LOCK)
    assert {name: test.get(name) for name in runtime} == runtime
    reached = closure(declared(extras=()), installed=installed_distributions())
    assert set(runtime) == reached - {"pip", "setuptools", "wheel"}


def test_this_venv_holds_exactly_the_test_lock() -> None:
    """ops/test ran ops/ensure-venv test, so the venv must be the lock: same versions, nothing pinned missing."""
    installed = installed_distributions()
    expected_runtime, expected_test = locks(installed)
    assert pins(TEST_LOCK) == expected_test
    assert pins(RUNTIME_LOCK) == expected_runtime


# --- the lock module's rules, on made-up distributions -------------------------------------


@dataclass(frozen=True)
class Dist:
    version: str
    requires: list[str] | None = field(default=None)


def test_names_are_compared_in_pep503_form() -> None:
    for given, expected in [
        ("PyYAML", "pyyaml"),
        ("typing_extensions", "typing-extensions"),
        ("zope.interface", "zope-interface"),
        ("a__-.b", "a-b"),
    ]:
        assert canonical(given) == expected


def test_parse_reads_what_render_writes_and_rejects_anything_but_exact_pins() -> None:
    text = render({"b-pkg": "2.0", "a": "1.0.post1"}, what="x")
    assert text.splitlines()[-2:] == ["a==1.0.post1", "b-pkg==2.0"]
    assert parse(text) == {"a": "1.0.post1", "b-pkg": "2.0"}
    assert parse("Foo_Bar==1  # why\n\n") == {"foo-bar": "1"}
    for bad in ["foo>=1", "foo==", "==1", "-e ."]:
        with pytest.raises(ValueError, match="NAME==VERSION"):
            parse(bad)


def test_closure_follows_markers_and_extras_and_reports_what_is_missing() -> None:
    installed: dict[str, Installed] = {
        PROJECT: Dist(
            "0",
            [
                "a>=1",
                'b; extra == "test"',
                'never; python_version < "3"',
                "c[fast]",
            ],
        ),
        "a": Dist("1", ["d"]),
        "b": Dist("1"),
        "c": Dist("1", ['e; extra == "fast"', 'f; extra == "slow"']),
        "d": Dist("1", ["a"]),  # a cycle ends
        "e": Dist("1"),
        "f": Dist("1"),
    }
    runtime, test = locks(installed)
    assert runtime == {"a": "1", "c": "1", "d": "1", "e": "1"}
    assert test == {**runtime, "b": "1"}
    with pytest.raises(LookupError, match="gone"):
        closure([Requirement("gone")], installed=installed)
