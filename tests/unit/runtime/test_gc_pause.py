"""Pausing the cyclic garbage collector during catch-up: pauses nest, and never undo the process's own choice."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from services.runtime import gc_pause


@pytest.fixture(autouse=True)
def _collector_enabled() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_a_pause_disables_the_collector_until_resumed() -> None:
    pause = gc_pause.pause()
    assert not gc.isenabled()
    pause.resume()
    assert gc.isenabled()
    pause.resume()  # idempotent: a second resume does not count twice
    assert gc.isenabled()


def test_pauses_nest_until_the_last_one_resumes() -> None:
    first, second = gc_pause.pause(), gc_pause.pause()
    first.resume()
    first.resume()
    assert not gc.isenabled()
    second.resume()
    assert gc.isenabled()


def test_a_collector_the_process_disabled_stays_disabled() -> None:
    gc.disable()
    with gc_pause.pause():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_the_context_manager_resumes_on_errors() -> None:
    with pytest.raises(RuntimeError), gc_pause.pause():
        raise RuntimeError("catch-up failed")
    assert gc.isenabled()


def test_a_tuned_process_freezes_what_a_catch_up_built_and_collects_the_young_less_often(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threshold = gc.get_threshold()
    monkeypatch.setattr(gc_pause, "_freeze_after_catch_up", False)
    try:
        gc_pause.tune_for_a_long_lived_heap()
        assert gc.get_threshold()[0] == gc_pause.YOUNG_THRESHOLD
        frozen_before = gc.get_freeze_count()
        with gc_pause.pause():
            view = [{"metadata": {"name": f"pod-{i}"}} for i in range(1000)]
        assert gc.get_freeze_count() >= frozen_before + len(view)
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


def test_an_untuned_process_freezes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gc_pause, "_freeze_after_catch_up", False)
    frozen_before = gc.get_freeze_count()
    with gc_pause.pause():
        view = [{"metadata": {"name": f"pod-{i}"}} for i in range(1000)]
    assert gc.get_freeze_count() == frozen_before
    assert len(view) == 1000
