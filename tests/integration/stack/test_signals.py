"""Ctrl-C (SIGINT) or SIGTERM stops `draplane apiserver` cleanly at any moment: exit status 0, its lock file emptied.

Each case holds the process at one moment with a hook (the command run by a
script that patches one step to wait for ever), and signals it once it says
it is there, so the interleaving is the same on every run:

- after "ready", while the committer still opens its snapshot (slower than
  the view on a loaded machine). The process used to hang at exit: the
  committer, cancelled there, left its snapshot open, and the connection's
  thread kept the interpreter waiting (tests/unit/runtime/test_stopped_while_opening.py);
- before "ready", while the view catches up with the log. SIGTERM used to end
  the process on the spot (its lock file left naming it), and Ctrl-C to be
  asyncio's own cancellation (status 130).

(Both signals at every moment, in-process: tests/unit/cmd/test_stopping.py.)
"""

from __future__ import annotations

import signal
from pathlib import Path

from tests.integration.stack.processes import Command

HOLD_AT = """
import asyncio, sys
from services.apiserver.service import Apiserver
from services.runtime.snapshot import SnapshotStore
from services.cli import main

async def hold(what):
    print("held:", what, flush=True)
    await asyncio.Event().wait()

opened = SnapshotStore.open
async def open_then_hold(self):
    await opened(self)
    if self.path.name == "committer.db" and sys.argv[1] == "committer-snapshot":
        await hold("committer-snapshot")
SnapshotStore.open = open_then_hold

waited = Apiserver.wait_ready
async def wait_ready(self, timeout=120.0):
    if sys.argv[1] == "view":
        await hold("view")
    await waited(self, timeout)
Apiserver.wait_ready = wait_ready

sys.exit(main(sys.argv[2:]))
"""


def apiserver_held_at(moment: str, data: Path) -> Command:
    args = ("apiserver", "--data", str(data), "--listen", "127.0.0.1:0", "--anonymous", "--plain-logs")
    return Command(moment, *args, script=HOLD_AT)


def test_ctrl_c_while_the_committer_opens_its_snapshot_after_ready(tmp_path: Path) -> None:
    data = tmp_path / "d"
    server = apiserver_held_at("committer-snapshot", data)
    try:
        server.wait_for_line(r"held: committer-snapshot")
        server.wait_for_line(r"apiserver ready on \d+")
    finally:
        assert server.stop(signal.SIGINT, timeout=20) == 0
    assert (data / "draplane.lock").read_text() == ""
    assert not (data / "apiserver" / "committer.db-wal").exists()  # its last connection closed


def test_sigterm_while_the_view_catches_up_before_ready(tmp_path: Path) -> None:
    data = tmp_path / "d"
    server = apiserver_held_at("view", data)
    try:
        server.wait_for_line(r"held: view")
    finally:
        assert server.stop(signal.SIGTERM, timeout=20) == 0
    assert not any("apiserver ready" in line for line in server.lines)
    assert (data / "draplane.lock").read_text() == ""
