"""Chained requests: a write the committer applies only if the write sent before it succeeded.

Why: a component whose next write depends on its previous one — the
scheduler's claim status after the claim's finalizer, a pod's
ResourceClaimStatuses after the claim it names — would otherwise wait a whole
trip through the log (request, commit, reply, its informer) between the two.
Sent together, both are decided in one batch. A request names the request it
follows (`Request.after`, same requester); the committer answers it 409
Conflict without applying it when that request did not succeed, or is not
remembered (decided too long ago, or by a committer that has restarted since):
the sender then goes on as if it had sent the two one after the other, reading
the first reply and retrying from there.

`Request.after_version`: the request's resourceVersion precondition is "the
object is as the request it follows left it" — the version that request wrote,
which the sender cannot know in advance. The request carries no
resourceVersion of its own then; kube-apiserver's answer to the same two writes
sent one after the other would be the same (the second names the version the
first returned).

Each write is still decided alone, with every check and admission plugin of its
own; the log holds the same records as for writes sent one after the other.
Pure: no I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol

from services.api.machinery import status as st
from services.runtime.committer_state import PENDING, Obj
from topics.envelope import Request


class Written(Protocol):
    """A write as the committer core stages it: its object, and its offset once appended."""

    key: str
    object: Obj
    offset: int


@dataclass(frozen=True, slots=True)
class Decision:
    """How a request was decided: whether it succeeded, and the last write it made (None: it wrote nothing)."""

    succeeded: bool
    write: Written | None = None


class Decisions:
    """The decisions of the most recent requests, oldest forgotten first."""

    def __init__(self, *, window: int = 10_000) -> None:
        self._recent: OrderedDict[str, Decision] = OrderedDict()
        self._window = window

    def __len__(self) -> int:
        return len(self._recent)

    def get(self, request_id: str) -> Decision | None:
        return self._recent.get(request_id)

    def remember(self, request_id: str, decision: Decision) -> None:
        self._recent[request_id] = decision
        self._recent.move_to_end(request_id)
        while len(self._recent) > self._window:
            self._recent.popitem(last=False)


def check_chain(req: Request, prior: Decision | None, current: tuple[int, Obj] | None) -> None:
    """Raise the 409 that answers `req` when the request it follows did not leave what `req` needs.

    ``prior``: the decision of the request named by ``req.after`` (None: not
    remembered); ``current``: the entry (offset, object) of ``req``'s key as the
    batch sees it, for ``after_version``.
    """
    if not req.after:
        return
    if prior is None or not prior.succeeded:
        why = "was not applied" if prior is not None else "is not known to the committer"
        raise st.conflict(
            req.group, req.resource, req.name, f"not applied: the request it was sent after ({req.after}) {why}"
        )
    if req.after_version and not _left_as_written(prior.write, req.key, current):
        raise st.modified_conflict(req.group, req.resource, req.name)


def _left_as_written(write: Written | None, key: str, current: tuple[int, Obj] | None) -> bool:
    if write is None or write.key != key or current is None:
        return False
    offset, obj = current
    if offset == PENDING:  # written earlier in this batch: the staged object is that write's own
        return obj is write.object
    return offset == write.offset
