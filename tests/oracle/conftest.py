"""The oracle suite's servers: one draplane apiserver and one kube-apiserver 1.31.14 for the whole session.

kube-apiserver and etcd come from the shared build cache (ops/upstreamkit).
When they are not there the upstream tests skip with the reason — or fail,
when ``DRAPLANE_REQUIRE_UPSTREAM=1`` (./ops/test) says they must be there.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.oracle import targets
from tests.support.oracle.runner import Target


@pytest.fixture(scope="session")
def oracle_draplane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    with targets.draplane(tmp_path_factory.mktemp("oracle-draplane")) as target:
        yield target


@pytest.fixture(scope="session")
def oracle_upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    with targets.upstream(tmp_path_factory.mktemp("oracle-upstream")) as target:
        yield target
