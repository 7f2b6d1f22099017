"""PreBind's last writes and the pod's binding, sent as one chain (issue 21).

Why: DynamicResources' PreBind writes a claim's finalizer, allocation and
reservation, then DefaultBinder creates ``pods/binding``. Each write depends
on the one before, and each sent alone costs a whole trip through the log
(request, commit, reply, informer). Chained (``APIClient.write_chain``) the
binding costs no trip of its own: the committer applies it only if every
write before it succeeded, which is exactly when kube-scheduler would send it.

How the framework carries it, so that neither plugin knows the other:

- the Profile *offers* a `BindingChain` in the CycleState to its last PreBind
  plugin, when its first Bind plugin can say beforehand what it will write
  (``ChainedBindPlugin.binding_write``). The offer names the client the
  binding goes through: a chain is one requester's, so only a plugin writing
  through the same client may take it (`offered`);
- a plugin that takes it *defers* its last writes: the writes, and ``settle``,
  the rest of its PreBind, which reads their answers (bookkeeping, conflict
  retries of its own) and returns its PreBind status. It returns success then,
  and must have nothing left to do after those writes;
- `send` (run by the Profile once every PreBind plugin returned) sends the
  deferred writes with the binding chained after them, and keeps the
  binding's answer in the CycleState; ``settle``'s status is reported as that
  plugin's PreBind status, so errors, Unreserve and events are as before;
- Bind then takes the kept answer (`take_binding`): an applied binding is the
  Bind plugin's success; one refused 409 Conflict is sent again by the Bind
  plugins as usual (it was not applied because a write before it was refused
  and retried, or the committer forgot the chain after a restart: the sender
  goes on as after any conflict); any other refusal is the Bind plugin's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from services.scheduler.client import APIClient, Write, WriteResult
from services.scheduler.framework import CycleState
from services.scheduler.status import Status

OFFER_KEY = "framework/binding-chain"
_BINDING_KEY = "framework/binding-chain/binding"

Settle = Callable[[Sequence[WriteResult]], Awaitable[Status | None]]
"""The rest of a PreBind plugin, given the answers of its deferred writes; returns its PreBind status."""


@dataclass(frozen=True, slots=True)
class Deferred:
    plugin: str
    writes: tuple[Write, ...]
    settle: Settle


class BindingChain:
    """The offer: a PreBind plugin may leave its last writes to be sent with the binding chained after them."""

    __slots__ = ("client", "deferred")

    def __init__(self, client: APIClient) -> None:
        self.client = client
        self.deferred: Deferred | None = None

    def defer(self, plugin: str, writes: Sequence[Write], settle: Settle) -> None:
        if self.deferred is not None:
            raise RuntimeError(f"the binding chain was already taken by {self.deferred.plugin}")
        if not writes:
            raise ValueError("nothing to defer")
        self.deferred = Deferred(plugin, tuple(writes), settle)


def offered(state: CycleState, client: APIClient) -> BindingChain | None:
    """The offer a PreBind plugin writing through ``client`` may take (None: there is none for it)."""
    offer = state.get(OFFER_KEY)
    if isinstance(offer, BindingChain) and offer.client is client and offer.deferred is None:
        return offer
    return None


async def send(state: CycleState, deferred: Deferred, client: APIClient, binding: Write) -> Status | None:
    """Send the deferred writes and the binding as one chain; the deferring plugin's PreBind status."""
    results = await client.write_chain([*deferred.writes, binding])
    state.write(_BINDING_KEY, results[-1])
    return await deferred.settle(results[:-1])


_NONE = object()


def take_binding(state: CycleState) -> WriteResult | None:
    """The answer to a binding `send` chained (None: no binding was chained in this cycle)."""
    answer = state.get(_BINDING_KEY, _NONE)
    state.delete(_BINDING_KEY)
    return None if answer is _NONE else answer
