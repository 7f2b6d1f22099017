"""Failures a command reports to its user in one line, rendered once by `services.cli`.

A command raises `CommandError` for what the user can act on (a log that is
not there, a data directory another stack holds, a port in use); the bus's own
failures (`services.bus.BusError`: an unreachable broker, a missing topic) are
rendered the same way. Neither is a bug, so neither gets a traceback.
"""

from __future__ import annotations


class CommandError(Exception):
    """One line for the user (printed as ``error: <message>``) and the exit status (1 unless said)."""

    def __init__(self, message: str, *, status: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
