"""Pausing Python's cyclic garbage collector while a view of the log is rebuilt.

An informer catching up (or a committer recovering) turns every record of
`objects` into a long-lived object — a dozen dicts and lists each. CPython
runs a *full* collection whenever the objects that survived into the oldest
generation have grown by a quarter since the last one, and a full collection
walks every container in the process: the whole store built so far, and
everything else alive. Catch-up is one long run of such growth, so it pays for
a walk of the growing heap again and again: measured, about half of an
informer's catch-up time on 20,000 1 KB objects went to collections that freed
nothing (the objects are acyclic JSON, freed by reference counting).

`pause()` disables the collector until every pause is resumed; the last
`resume` enables it again. A process that disabled the collector itself keeps
it disabled. Reference counting goes on meanwhile, so only garbage *cycles*
wait, and only for the length of the catch-up. Pauses nest across informers
and the committer in one process.

A component process also calls `tune_for_a_long_lived_heap` once at start.
After that, the last catch-up to finish *freezes* what is alive
(``gc.freeze()``: the views just built are never walked again; they are still
freed by reference counting when replaced), and the youngest generation is
collected every `YOUNG_THRESHOLD` allocations instead of every 700, so the
objects a live component creates per change (decoded records, replies, work
items) mostly die young without being walked at all. Measured on the
controller-manager recording 12,000 claims (``ops/bench/claims.py --process``):
2.8 s of its ~10 s of CPU went to collections with CPython's defaults, 0.8 s
with this tuning. Test processes do not call it: freezing there would keep
every earlier test's garbage cycles.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000
"""Allocations between collections of the youngest generation (CPython's default: 700)."""

_holders = 0
_we_disabled = False
_freeze_after_catch_up = False


def tune_for_a_long_lived_heap() -> None:
    """Tune this process's collector for a component that holds views of the log (see module docstring)."""
    global _freeze_after_catch_up
    _freeze_after_catch_up = True
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, old)


class Pause:
    """One holder's pause of the collector; `resume` is idempotent."""

    def __init__(self) -> None:
        global _holders, _we_disabled
        self._active = True
        if _holders == 0 and gc.isenabled():
            gc.disable()
            _we_disabled = True
        _holders += 1

    def resume(self) -> None:
        global _holders, _we_disabled
        if not self._active:
            return
        self._active = False
        _holders -= 1
        if _holders == 0 and _we_disabled:
            _we_disabled = False
            if _freeze_after_catch_up:
                gc.freeze()
            gc.enable()

    def __enter__(self) -> Pause:
        return self

    def __exit__(self, *exc: object) -> None:
        self.resume()


def pause() -> Pause:
    """Pause the cyclic collector until the returned `Pause` is resumed."""
    return Pause()
