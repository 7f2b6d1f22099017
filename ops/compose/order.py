"""Start and stop order from ``depends_on``, as compose computes it.

Why this module exists: services start after what they depend on and stop
before it; a cycle is an error naming its members. Ties keep the file's order,
so the order is deterministic and reads like the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ops.compose.model import ComposeError


def start_order(depends_on: Mapping[str, Sequence[str]]) -> list[str]:
    """Every service after its dependencies (Kahn's algorithm; ties in the mapping's order)."""
    for name, dependencies in depends_on.items():
        for dependency in dependencies:
            if dependency not in depends_on:
                raise ComposeError(f"service {name} depends on undefined service {dependency}")
    placed: list[str] = []
    done: set[str] = set()
    while len(placed) < len(depends_on):
        ready = [n for n, deps in depends_on.items() if n not in done and all(d in done for d in deps)]
        if not ready:
            stuck = sorted(n for n in depends_on if n not in done)
            raise ComposeError(f"dependency cycle among services: {', '.join(stuck)}")
        placed.extend(ready)
        done.update(ready)
    return placed


def levels(depends_on: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """Each service's depth: 0 without dependencies, else one more than its deepest dependency."""
    depth: dict[str, int] = {}
    for name in start_order(depends_on):
        depth[name] = 1 + max((depth[d] for d in depends_on[name]), default=-1)
    return depth


def stop_waves(depends_on: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Groups to stop one after the other, dependents first; each group may stop in parallel."""
    depth = levels(depends_on)
    deepest = max(depth.values(), default=-1)
    return [[n for n in depth if depth[n] == level] for level in range(deepest, -1, -1)]
