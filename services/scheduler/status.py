"""Plugin result codes and the Status every extension point returns.

kube-scheduler's plugins answer with a ``*framework.Status``: a code, one or
more human-readable reasons and the plugin that produced it. The queue decides
where a rejected pod waits from the code and the plugin name, and the
FailedScheduling message is assembled from the reasons, so both have to be
reproduced exactly. ``None`` stands for Go's ``nil`` status, i.e. Success.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import IntEnum


class Code(IntEnum):
    """Status codes in kube-scheduler's order (framework/interface.go)."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    def __str__(self) -> str:
        return _CODE_NAMES[self]


_CODE_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


@dataclass(frozen=True, slots=True)
class Status:
    """The result of running a plugin; immutable so it can be shared between nodes."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    error: BaseException | None = field(default=None, compare=False)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_wait(self) -> bool:
        return self.code == Code.WAIT

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending, as kube's IsRejected."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def with_plugin(self, plugin: str) -> Status:
        return replace(self, plugin=plugin)

    def as_error(self) -> Exception:
        """The status as an exception (Go's ``Status.AsError``)."""
        if isinstance(self.error, Exception):
            return self.error
        return SchedulingError(self.message())

    def __str__(self) -> str:
        text = f"{self.code}"
        if self.reasons:
            text += f": {self.message()}"
        return text


class SchedulingError(Exception):
    """An unexpected failure inside a plugin or the framework (code Error)."""


def new_status(code: Code, *reasons: str) -> Status:
    return Status(code=code, reasons=tuple(reasons))


def as_status(err: BaseException) -> Status:
    """Wrap an exception as an Error status whose reason is its text (Go's ``AsStatus``)."""
    return Status(code=Code.ERROR, reasons=(str(err),), error=err)


def is_success(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS


def code_of(status: Status | None) -> Code:
    return Code.SUCCESS if status is None else status.code


SUCCESS = Status()
