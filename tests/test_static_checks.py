"""Static checks as tests: ruff over the code and the import-linter layer contracts.

A lint finding or a broken layer contract (say, aiokafka imported outside
``services.bus``) fails the test run, whoever runs it and however.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
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
