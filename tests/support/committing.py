"""Drive a `CommitterCore` without a log: decide a batch and pretend the log appended it.

Unit tests of the committer's decisions (apply ownership, patch identity, ...) need the same three steps the
committer loop takes after `process` — offsets for the writes, `stamp`, `advance` — without a bus.
"""

from __future__ import annotations

import itertools

from services.runtime.committer_core import CommitterCore, Outcome
from topics.envelope import Request

_offsets = itertools.count(100)


def commit_batch(core: CommitterCore, *requests: Request) -> list[Outcome]:
    """Decide ``requests`` as one batch, appended at increasing offsets."""
    outcomes = core.process(list(requests))
    for outcome in outcomes:
        for write in outcome.writes:
            write.offset = next(_offsets)
    core.stamp(outcomes)
    core.advance(outcomes, next(_offsets))
    return outcomes


def commit_one(core: CommitterCore, request: Request) -> Outcome:
    """Decide one request as its own batch."""
    [outcome] = commit_batch(core, request)
    return outcome
