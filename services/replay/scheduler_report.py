"""The report of ``draplane replay --scheduler``: one line per attempt that differs, then a summary; or JSON.

Pure. Text for people — one line per differing attempt (the pod, what was
recorded, what the replay decided, and in which aspects they differ), a line
per attempt that could not be replayed, and last the summary
``replay-scheduler: attempts=<n> same=<n> different=<n>`` (with
``not-replayed=<n>`` appended when some were not). JSON for scripts: one
document with the counts and every difference.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from services.replay.output import iso
from services.replay.scheduler_diff import AttemptView, RecordedAttempt

MAX_NODES_SHOWN = 5  # rejected nodes named per plugin on a text line


@dataclass(frozen=True, slots=True)
class Comparison:
    attempt: RecordedAttempt
    recorded: AttemptView
    replayed: AttemptView
    differ: tuple[str, ...]

    @property
    def same(self) -> bool:
        return not self.differ


@dataclass(frozen=True, slots=True)
class NotReplayed:
    attempt: RecordedAttempt
    reason: str


@dataclass(slots=True)
class Report:
    compared: list[Comparison] = field(default_factory=list)
    not_replayed: list[NotReplayed] = field(default_factory=list)

    @property
    def attempts(self) -> int:
        return len(self.compared)

    @property
    def same(self) -> int:
        return sum(1 for c in self.compared if c.same)

    @property
    def different(self) -> int:
        return self.attempts - self.same

    def differences(self) -> list[Comparison]:
        return [c for c in self.compared if not c.same]


def _nodes(names: list[str]) -> str:
    if len(names) <= MAX_NODES_SHOWN:
        return ", ".join(names)
    return ", ".join(names[:MAX_NODES_SHOWN]) + f" and {len(names) - MAX_NODES_SHOWN} more"


def rejections_text(rejections: Mapping[str, str]) -> str:
    """``DynamicResources on node-1, node-2; NodeResourcesFit on node-3``: plugins by how many nodes they rejected."""
    by_plugin: dict[str, list[str]] = {}
    for node, plugin in sorted(rejections.items()):
        by_plugin.setdefault(plugin or "-", []).append(node)
    ordered = sorted(by_plugin.items(), key=lambda item: (-len(item[1]), item[0]))
    return "; ".join(f"{plugin} on {_nodes(nodes)}" for plugin, nodes in ordered)


def describe(attempt: AttemptView) -> str:
    """One attempt in a few words: ``scheduled on node-1 [claim default/a: gpu=drv/pool/gpu-0]``."""
    if attempt.result == "scheduled":
        text = f"scheduled on {attempt.node or '?'}"
        if attempt.allocation:
            claims = "; ".join(
                f"claim {claim}: {', '.join(devices) or 'no devices'}" for claim, devices in attempt.allocation.items()
            )
            text += f" [{claims}]"
        return text
    text = attempt.result or "?"
    if attempt.rejections:
        text += f" ({rejections_text(attempt.rejections)})"
    elif attempt.message:
        text += f" ({attempt.message})"
    return text


def where(attempt: RecordedAttempt) -> str:
    at = f"at {attempt.seen}" if attempt.exact else f"at {attempt.seen}, estimated from its time"
    return f"{attempt.pod} attempt {attempt.attempt} (cycle {attempt.cycle}, {at})"


def difference_line(comparison: Comparison) -> str:
    verb = "differs" if len(comparison.differ) == 1 else "differ"
    return (
        f"{where(comparison.attempt)}: recorded {describe(comparison.recorded)}; "
        f"replayed {describe(comparison.replayed)} — {', '.join(comparison.differ)} {verb}"
    )


def not_replayed_line(item: NotReplayed) -> str:
    return f"{where(item.attempt)}: not replayed: {item.reason}"


def summary_line(report: Report) -> str:
    line = f"replay-scheduler: attempts={report.attempts} same={report.same} different={report.different}"
    if report.not_replayed:
        line += f" not-replayed={len(report.not_replayed)}"
    return line


def render_text(report: Report) -> str:
    lines = [difference_line(c) for c in report.differences()]
    lines += [not_replayed_line(item) for item in report.not_replayed]
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def attempt_json(attempt: RecordedAttempt) -> dict[str, Any]:
    return {
        "pod": attempt.pod,
        "uid": attempt.uid,
        "attempt": attempt.attempt,
        "cycle": attempt.cycle,
        "time": iso(attempt.time_ms),
        "resourceVersion": str(attempt.seen),
        "exact": attempt.exact,
        "decisionOffset": attempt.decision_offset,
    }


def render_json(report: Report) -> dict[str, Any]:
    return {
        "attempts": report.attempts,
        "same": report.same,
        "different": report.different,
        "notReplayed": len(report.not_replayed),
        "differences": [
            {
                **attempt_json(c.attempt),
                "differ": list(c.differ),
                "recorded": c.recorded.to_json(),
                "replayed": c.replayed.to_json(),
            }
            for c in report.differences()
        ],
        "notReplayedAttempts": [{**attempt_json(n.attempt), "reason": n.reason} for n in report.not_replayed],
    }
