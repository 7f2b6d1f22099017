"""docs/testing.md's "Run it" commands work as written, in a shell that has not activated anything.

The commands are read from the document itself and run with ``bash`` from the
repository's root, with a plain ``PATH`` (no ``.venv/bin``, no pyenv shims):
what a new user types on a fresh clone after ``./ops/up``. The broker and
testcontainers variants need a Kafka and a Docker engine; the embedded-log one
and the set-up run here.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "testing.md"
PLAIN_PATH = "/usr/local/bin:/usr/bin:/bin"


def run_it_commands() -> list[str]:
    """The indented block after "Run it", each command without its trailing comment."""
    text = DOC.read_text(encoding="utf-8")
    assert "\nRun it" in text, "docs/testing.md has no 'Run it' section"
    after = text.split("\nRun it", 1)[1]
    lines = after.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("    "))
    commands: list[str] = []
    for line in lines[start:]:
        if not line.startswith("    "):
            break
        commands.append(line.split("  #", 1)[0].strip())
    return commands


def test_the_documented_commands_run_as_written_in_a_plain_shell(tmp_path: Path) -> None:
    commands = [c for c in run_it_commands() if "KAFKA_BOOTSTRAP_SERVERS" not in c and "testcontainers" not in c]
    assert any("examples/test_my_gpu_workload.py" in c for c in commands), commands
    env = {"PATH": PLAIN_PATH, "HOME": os.environ.get("HOME", str(tmp_path)), "LANG": "C.UTF-8"}
    for command in commands:
        result = subprocess.run(
            ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        assert result.returncode == 0, f"{command!r} failed ({result.returncode}):\n{result.stdout}{result.stderr}"
    assert " passed" in result.stdout and "failed" not in result.stdout, result.stdout
