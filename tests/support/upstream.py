"""The upstream binaries for a test: waits for ``./ops/test``'s background build, then skips or fails without them.

A test (or fixture) that runs kube-apiserver, kube-scheduler,
kube-controller-manager or etcd calls `require_upstream` first; see
``ops/upstreamkit/waiting.py`` for what is waited on. Such tests live in
``tests/upstream/`` (collected last, so the build has the longest time) and
carry ``pytest.mark.timeout(UPSTREAM_TIMEOUT)``: the wait counts in the test's
time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from ops.upstreamkit.build import DEFAULT_TARGETS, Target
from ops.upstreamkit.waiting import DEFAULT_TIMEOUT, REQUIRE_ENV, Unavailable, wait_for_build

# pytest-timeout for a test whose setup may wait for the whole first build.
UPSTREAM_TIMEOUT = int(DEFAULT_TIMEOUT) + 600


def require_upstream(targets: Sequence[Target] = DEFAULT_TARGETS) -> dict[Target, Path]:
    """The binaries' paths; skips the test without them, or fails it when ``DRAPLANE_REQUIRE_UPSTREAM=1``."""
    result = wait_for_build(targets)
    if isinstance(result, Unavailable):
        if result.required:
            pytest.fail(f"{REQUIRE_ENV}=1 but {result.reason}")
        pytest.skip(result.reason)
    return result


async def require_upstream_async(targets: Sequence[Target] = DEFAULT_TARGETS) -> dict[Target, Path]:
    """`require_upstream` from async code, without blocking the event loop while the build runs."""
    return await asyncio.to_thread(require_upstream, targets)
