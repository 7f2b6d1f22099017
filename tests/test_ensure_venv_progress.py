"""``ops/ensure-venv`` (run by ``./ops/up``) says what it installs, step by step (issue 17, "why" 7).

The first ``./ops/up`` installs for a while; before, it said one line and
then nothing (pip ran with ``--quiet``). The script runs here for real, in a
copy of the repository's layout, with a stand-in for Python that records how
pip was called and prints what pip would: on a terminal (stderr a pty) pip's
own output and progress bar come through; piped, pip is quiet. The step lines
are on stderr either way, stdout stays empty.
"""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FAKE_PYTHON = """#!/usr/bin/env bash
echo "$*" >>"$FAKE_PYTHON_LOG"
if [[ $1 == -m && $2 == venv ]]; then
  mkdir -p "$3/bin" && cp "$0" "$3/bin/python"
elif [[ $1 == -m && $2 == pip && $4 == install && " $* " != *" --quiet "* ]]; then
  echo "pip says: Collecting things"
fi
"""


def setup(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "repo"
    (repo / "ops").mkdir(parents=True)
    shutil.copy(ROOT / "ops" / "ensure-venv", repo / "ops" / "ensure-venv")
    (repo / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (repo / "requirements.lock").write_text("# pins\naiohttp==1.0\norjson==2.0\n")
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    env = {**os.environ, "PYTHON": str(fake), "FAKE_PYTHON_LOG": str(tmp_path / "calls")}
    return repo, env


STEPS = [
    "ops: creating .venv with {python}",
    "ops: installing draplane into .venv from requirements.lock",
    "ops: [1/3] 2 pinned packages from requirements.lock (the first time takes a while)",
    "ops: [2/3] draplane itself (editable, no dependencies)",
    "ops: [3/3] checking that the pins satisfy pyproject.toml (pip check)",
    "ops: .venv is ready",
]


def test_piped_it_says_each_step_and_pip_is_quiet(tmp_path: Path) -> None:
    repo, env = setup(tmp_path)
    result = subprocess.run(
        [str(repo / "ops" / "ensure-venv")], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr.splitlines() == [s.format(python=env["PYTHON"]) for s in STEPS]
    installs = [c for c in (tmp_path / "calls").read_text().splitlines() if " install " in c]
    assert len(installs) == 2 and all("--quiet" in c for c in installs), installs
    # Up to date: nothing to do, nothing said.
    again = subprocess.run(
        [str(repo / "ops" / "ensure-venv")], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")


@pytest.mark.skipif(not hasattr(pty, "openpty"), reason="needs a pseudo-terminal")
def test_on_a_terminal_pip_shows_its_progress(tmp_path: Path) -> None:
    repo, env = setup(tmp_path)
    leader, follower = pty.openpty()
    try:
        result = subprocess.run(
            [str(repo / "ops" / "ensure-venv")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=60,
            check=False,
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end is closed: everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    terminal = b"".join(chunks).decode().replace("\r\n", "\n").splitlines()
    assert (result.returncode, result.stdout) == (0, b"")
    assert terminal.count("pip says: Collecting things") == 2
    assert [line for line in terminal if line.startswith("ops: ")] == [s.format(python=env["PYTHON"]) for s in STEPS]
    installs = [c for c in (tmp_path / "calls").read_text().splitlines() if " install " in c]
    assert len(installs) == 2 and not any("--quiet" in c for c in installs), installs
    assert all("--progress-bar on" in c for c in installs), installs
