"""`draplane up`'s ready line: plain when piped (tests and scripts match it), bold green on a terminal."""

from __future__ import annotations

from services.cmd.up import ready_line


def test_the_ready_line_stands_out_on_a_terminal_only() -> None:
    plain = "draplane is ready: http://127.0.0.1:8080 (Ctrl-C to stop)"
    assert ready_line("http://127.0.0.1:8080", terminal=False) == plain
    assert ready_line("http://127.0.0.1:8080", terminal=True) == f"\033[1;32m{plain}\033[0m"
