"""The embedded log: the bus port on one SQLite file, through sqlite3 (WAL, ``BEGIN IMMEDIATE``).

It is the single-machine default, as SQLite is for k3s: `draplane up` and most
tests run on it, and several processes may share one file.
"""

from services.bus.embedded.bus import EmbeddedBus

__all__ = ["EmbeddedBus"]
