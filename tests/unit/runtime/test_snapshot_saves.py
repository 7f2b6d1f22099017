"""A snapshot save that fails (or is cancelled) must not lose the keys it was saving (found by ``ops/chaos``).

A node agent whose run failed stopped its informer while a periodic save was
under way: the save was cancelled and rolled back, the keys it carried were
already forgotten, and the save in ``stop()`` stored the later offset without
them. The restarted agent then read its Node at a stale resourceVersion for
ever (409 on every status update, a crash loop). The committer's snapshot had
the same hole.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

import pytest

from services.bus.port import Bus
from services.runtime.committer import Committer
from services.runtime.committer_core import CommitterCore
from services.runtime.informer import Informer
from services.runtime.snapshot import SnapshotStore


class FlakyStore(SnapshotStore):
    """A snapshot store whose next ``failures`` saves raise (after touching nothing)."""

    def __init__(self, path: Path, failures: int) -> None:
        super().__init__(path)
        self.failures = failures

    async def save(
        self,
        *,
        offset: int,
        upserts: Mapping[str, tuple[int, dict[str, Any]]],
        deletes: Iterable[str],
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        if self.failures:
            self.failures -= 1
            raise OSError("disk full")
        await super().save(offset=offset, upserts=upserts, deletes=deletes, extra=extra)


def obj(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}}


async def test_an_informer_keeps_the_keys_of_a_failed_save(tmp_path: Path) -> None:
    store = FlakyStore(tmp_path / "view.db", failures=1)
    await store.open()
    informer = Informer(cast(Bus, None), snapshot=store)
    informer._dirty = {"core/pods/default/a": (10, obj("a")), "core/pods/default/b": None}
    informer.position = 11
    with pytest.raises(OSError):
        await informer._save_snapshot()
    informer._dirty["core/pods/default/c"] = (12, obj("c"))
    informer._dirty["core/pods/default/a"] = (13, obj("a"))  # changed again meanwhile: the newer one wins
    informer.position = 14
    await informer._save_snapshot()
    snap = await store.load()
    await store.close()
    assert snap is not None
    assert snap.offset == 14
    assert {k: off for k, (off, _) in snap.objects.items()} == {"core/pods/default/a": 13, "core/pods/default/c": 12}


async def test_a_committer_keeps_the_keys_of_a_failed_save(tmp_path: Path) -> None:
    store = FlakyStore(tmp_path / "committer.db", failures=1)
    await store.open()
    committer = Committer(cast(Bus, None), CommitterCore(), snapshot=store)
    committer._snapshot_loaded = True
    committer.core.index.put("core/pods/default/a", 10, obj("a"))
    committer.core.index.position = 11
    committer._dirty = {"core/pods/default/a"}
    with pytest.raises(OSError):
        await committer._save_snapshot()
    committer.core.index.put("core/pods/default/c", 12, obj("c"))
    committer.core.index.position = 13
    committer._dirty.add("core/pods/default/c")
    await committer._save_snapshot()
    snap = await store.load()
    await store.close()
    assert snap is not None
    assert snap.offset == 13
    assert sorted(snap.objects) == ["core/pods/default/a", "core/pods/default/c"]
