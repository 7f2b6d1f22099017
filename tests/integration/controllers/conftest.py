"""Fixtures for the controller integration tests: a private embedded log and an admin client on it.

The log's apiserver admission (defaulting, gated-field dropping, validation)
runs with every DRA gate on, so tests can store classic claims and
``adminAccess`` templates; what a controller does with a gate is set on the
controller itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from services.apiserver.admission_chain import build_admission
from services.kube.feature_gates import FeatureGates
from services.runtime.client import Client
from services.testing.harness import LogHarness

ALL_DRA_GATES = FeatureGates.from_map(
    {"DynamicResourceAllocation": True, "DRAControlPlaneController": True, "DRAAdminAccess": True}
)


@pytest.fixture
async def log(tmp_path: Path) -> AsyncIterator[LogHarness]:
    admission = build_admission(gates=ALL_DRA_GATES)
    async with LogHarness.running(f"sqlite://{tmp_path / 'bus.db'}", admission=admission) as harness:
        yield harness


@pytest.fixture
async def admin(log: LogHarness) -> Client:
    """A system:masters client; reads come from its own informer (it sees its own writes)."""
    return await log.client()
