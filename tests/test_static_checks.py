"""Static checks as tests: ruff over the code, mypy, and the import-linter layer contracts.

A lint finding, a type error or a broken layer contract (say, aiokafka imported
outside ``services.bus``) fails the test run, whoever runs it and however:
``./ops/test`` and CI count them in pytest's summary like any other test.
mypy reads its targets and its cache directory (``.cache/mypy``) from
pyproject.toml, so a run after the first checks only what changed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def tool(name: str) -> str:
    """The tool next to this interpreter (the venv's), else on PATH."""
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; it comes with `pip install -e '.[test]'`")
    return found


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)


def test_ruff_finds_nothing() -> None:
    result = run(tool("ruff"), "check", "services", "topics", "ops", "tests")
    assert result.returncode == 0, f"ruff check failed:\n{result.stdout}{result.stderr}"


def test_import_contracts_hold() -> None:
    result = run(tool("lint-imports"), "--no-cache")
    assert result.returncode == 0, f"lint-imports failed:\n{result.stdout}{result.stderr}"


def mypy_targets() -> list[Path]:
    """Every Python file under the ``files`` that pyproject.toml gives mypy."""
    with (REPO / "pyproject.toml").open("rb") as f:
        files = tomllib.load(f)["tool"]["mypy"]["files"]
    found: list[Path] = []
    for entry in files:
        path = REPO / entry
        found.extend([path] if path.is_file() else sorted(path.rglob("*.py")))
    return found


def test_mypy_finds_nothing_in_every_file_it_is_given() -> None:
    result = run(tool("mypy"))
    assert result.returncode == 0, f"mypy failed:\n{result.stdout}{result.stderr}"
    # A target that mypy skipped (a misspelt path, a module it could not map) would pass silently.
    assert f"no issues found in {len(mypy_targets())} source files" in result.stdout, result.stdout
