"""The data-directory lock: one holder at a time, its file naming it, nothing left to block once released."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from services.cmd import data_lock
from services.cmd.data_lock import DataDirInUse, Holder


@pytest.mark.parametrize(
    ("text", "holder"),
    [
        ("123\nhttp://127.0.0.1:8080\n", Holder(123, "http://127.0.0.1:8080")),
        ("123\n", Holder(123, "")),
        ("", Holder(None, "")),  # released: the holder truncates it
        ("garbage\nhttps://h:1\n", Holder(None, "https://h:1")),
    ],
)
def test_holder_parse(text: str, holder: Holder) -> None:
    assert Holder.parse(text) == holder
    if holder.pid is not None and holder.address:
        assert Holder.parse(holder.render()) == holder


def test_a_second_holder_is_refused_naming_the_first_until_it_lets_go(tmp_path: Path) -> None:
    data = tmp_path / "d"
    first = data_lock.acquire(data, address="http://127.0.0.1:0")
    first.update("http://127.0.0.1:8080")
    # flock belongs to the open file: a second open in this same process conflicts as another process would.
    with pytest.raises(DataDirInUse) as refused:
        data_lock.acquire(data, address="http://127.0.0.1:9090")
    assert refused.value.holder == Holder(os.getpid(), "http://127.0.0.1:8080")
    assert refused.value.message == (
        f"{data} is in use by another draplane (PID {os.getpid()}, http://127.0.0.1:8080); "
        "stop it or choose another --data"
    )
    assert refused.value.status == 1
    first.release()
    assert (data / data_lock.LOCK_FILE).read_text() == ""
    with data_lock.holding(data, address="http://127.0.0.1:9090"):
        assert Holder.parse((data / data_lock.LOCK_FILE).read_text()) == Holder(os.getpid(), "http://127.0.0.1:9090")


def test_sigterm_while_held_empties_the_file_as_ctrl_c_does(tmp_path: Path) -> None:
    """Where no event loop takes it (before the command's loop runs, after it ends), SIGTERM is Ctrl-C."""
    if signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        pytest.skip("SIGTERM has a handler here already")
    data = tmp_path / "d"
    with pytest.raises(KeyboardInterrupt), data_lock.holding(data, address="http://127.0.0.1:8080"):
        assert signal.getsignal(signal.SIGTERM) is signal.default_int_handler  # else the kill would end pytest
        os.kill(os.getpid(), signal.SIGTERM)
    assert (data / data_lock.LOCK_FILE).read_text() == ""
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
