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


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that need kube-apiserver run last, so ./ops/test's background build has the longest time."""
    needs = [i for i in items if "oracle_played" in getattr(i, "fixturenames", ())]
    if needs:
        rest = [i for i in items if "oracle_played" not in getattr(i, "fixturenames", ())]
        items[:] = rest + needs


@pytest.fixture(scope="session")
def oracle_draplane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    with targets.draplane(tmp_path_factory.mktemp("oracle-draplane")) as target:
        yield target


@pytest.fixture(scope="session")
def oracle_upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    with targets.upstream(tmp_path_factory.mktemp("oracle-upstream")) as target:
        yield target
