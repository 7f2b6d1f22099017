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
"""

from __future__ import annotations

import gc

_holders = 0
_we_disabled = False


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
            gc.enable()

    def __enter__(self) -> Pause:
        return self

    def __exit__(self, *exc: object) -> None:
        self.resume()


def pause() -> Pause:
    """Pause the cyclic collector until the returned `Pause` is resumed."""
    return Pause()
