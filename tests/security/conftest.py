"""A secured apiserver per test module: HTTPS, the token file of `apiservers`, no anonymous access, tight limits."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from tests.security.apiservers import MAX_BODY_BYTES, MAX_WATCHES, TOKENS, RunningApiserver, running_apiserver


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def secured(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[RunningApiserver]:
    root = tmp_path_factory.mktemp("secured")
    async with running_apiserver(
        root, tokens=TOKENS, tls=True, max_body_bytes=MAX_BODY_BYTES, max_watches_per_user=MAX_WATCHES
    ) as running:
        yield running
