"""Property test: whatever happens, every pod is in exactly one place and none is lost."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from services.scheduler.cluster_events import ActionType, ClusterEvent, Resource
from services.scheduler.framework import QueueingHint
from services.scheduler.queue import PriorityQueue, QueuedPodInfo

from .builders import FakeClock, make_pod
from .test_queue import FakePlugin, FakeProfile, always

EVENT = ClusterEvent(Resource.NODE, ActionType.ADD, "NodeAdd")

operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 7)),
        st.tuples(st.just("pop"), st.just(0)),
        st.tuples(st.just("fail"), st.integers(0, 2)),
        st.tuples(st.just("bind"), st.just(0)),
        st.tuples(st.just("event"), st.just(0)),
        st.tuples(st.just("delete"), st.integers(0, 7)),
        st.tuples(st.just("tick"), st.floats(0, 400)),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(operations, st.booleans())
def test_no_pod_lost_or_duplicated(ops: list[tuple[str, float]], pop_from_backoff_q: bool) -> None:
    clock = FakeClock()
    plugins = [FakePlugin("A", {EVENT: always(QueueingHint.QUEUE)}), FakePlugin("B", {})]
    profiles = {"default-scheduler": FakeProfile(plugins)}
    queue = PriorityQueue(clock=clock, profiles=profiles, pop_from_backoff_q=pop_from_backoff_q)
    live: set[str] = set()  # pods that exist
    in_flight: list[QueuedPodInfo] = []
    dead: set[str] = set()  # uids of deleted pods (a re-created pod gets a new uid)
    incarnation = 0
    for op, arg in ops:
        if op == "add":
            name = f"p{int(arg)}"
            if name not in live:
                live.add(name)
                incarnation += 1
                queue.add(make_pod(name, uid=f"{name}-{incarnation}", priority=int(arg) % 3))
        elif op == "pop":
            pinfo = queue.pop_nowait()
            if pinfo is not None:
                in_flight.append(pinfo)
        elif op == "fail" and in_flight:
            pinfo = in_flight.pop(0)
            pinfo.unschedulable_plugins = [set(), {"A"}, {"B"}][int(arg)]
            queue.add_unschedulable_if_not_present(pinfo)
        elif op == "bind" and in_flight:
            pinfo = in_flight.pop(0)
            queue.done(pinfo.uid)
            if pinfo.uid not in dead:
                live.discard(pinfo.key.split("/")[1])
        elif op == "event":
            queue.move_all_to_active_or_backoff_queue(EVENT, None, {})
        elif op == "delete":
            name = f"p{int(arg)}"
            if name in live:
                live.discard(name)
                for pinfo in in_flight:
                    if pinfo.pod["metadata"]["name"] == name:
                        dead.add(pinfo.uid)
                queue.delete(make_pod(name, uid=next((p.uid for p in in_flight if p.key.endswith(f"/{name}")), name)))
        elif op == "tick":
            clock.step(float(arg))
            queue.flush()
        flying = {p.pod["metadata"]["name"] for p in in_flight if p.uid not in dead}
        queued = [p["metadata"]["name"] for p in queue.pending_pods()]
        assert len(queued) == len(set(queued)), "a pod is queued twice"
        assert not (set(queued) & flying), "a pod is queued while in flight"
        assert set(queued) <= live
        assert set(queued) | flying >= live - flying, "a live pod is nowhere"
        assert sum(queue.pending_counts().values()) == len(queued)
    # Everything still alive and not in flight is somewhere in the queue.
    flying = {p.pod["metadata"]["name"] for p in in_flight if p.uid not in dead}
    assert {p["metadata"]["name"] for p in queue.pending_pods()} == live - flying
