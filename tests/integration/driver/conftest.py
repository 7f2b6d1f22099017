"""Fixtures for the driver and node agent integration tests: a private embedded log, an admin client, a state dir."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from services.runtime.client import Client
from services.testing.harness import LogHarness


@pytest.fixture
async def log(tmp_path: Path) -> AsyncIterator[LogHarness]:
    async with LogHarness.running(f"sqlite://{tmp_path / 'bus.db'}") as harness:
        yield harness


@pytest.fixture
async def admin(log: LogHarness) -> Client:
    """A system:masters client; reads come from its own informer (it sees its own writes)."""
    return await log.client()


@pytest.fixture
def state_dir() -> Iterator[Path]:
    """A node's state directory with a short path: unix socket paths are limited to about 100 bytes."""
    path = Path(tempfile.mkdtemp(prefix="dra"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
