"""ops/docker/engine and ops/docker/images: what they say and decide, and that unchanged inputs reuse the images.

The tag of an image is a hash of what goes into it (every file of its build
context, with its mode, and the base's tag), so these pin which changes make
a new image and which do not. The engine script's outcomes are one line each;
with an engine here, a second ``ops/docker/images`` builds nothing.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ops.docker import imagebuild
from ops.docker.imagebuild import base_image, context_key, tree
from tests.support.docker_engine import require_docker

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def context(tmp_path: Path) -> Path:
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("A = 1\n")
    (tmp_path / "pkg" / "b.txt").write_text("b\n")
    (tmp_path / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / "pkg" / "stray.pyc").write_bytes(b"\0")
    return tmp_path


def test_the_context_is_every_file_but_bytecode_in_order(context: Path) -> None:
    assert [name for name, _ in tree(context / "pkg", under="pkg/")] == ["pkg/a.py", "pkg/b.txt"]


@pytest.mark.parametrize(
    ("change", "new_image"),
    [
        ("nothing", False),
        ("bytecode", False),
        ("content", True),
        ("mode", True),
        ("new file", True),
        ("base", True),
    ],
)
def test_which_changes_make_a_new_image(context: Path, change: str, new_image: bool) -> None:
    before = context_key(tree(context / "pkg", under="pkg/"), "draplane-base:1")
    base = "draplane-base:1"
    if change == "bytecode":
        (context / "pkg" / "__pycache__" / "b.cpython-311.pyc").write_bytes(b"\1")
    elif change == "content":
        (context / "pkg" / "a.py").write_text("A = 2\n")
    elif change == "mode":
        (context / "pkg" / "a.py").chmod(0o755)
    elif change == "new file":
        (context / "pkg" / "c.py").write_text("")
    elif change == "base":
        base = "draplane-base:2"
    after = context_key(tree(context / "pkg", under="pkg/"), base)
    assert (after != before) is new_image


def test_the_base_tag_follows_its_recipe(monkeypatch: pytest.MonkeyPatch) -> None:
    tag = base_image().tag
    assert tag == base_image().tag and tag.startswith("draplane-base:")
    monkeypatch.setattr(imagebuild, "BASE_DIRS", (*imagebuild.BASE_DIRS, "srv"))
    assert base_image().tag != tag


def test_the_engine_script_does_not_start_an_engine_for_another_docker_host(tmp_path: Path) -> None:
    nowhere = f"unix://{tmp_path / 'docker.sock'}"
    result = subprocess.run(
        [str(REPO / "ops" / "docker" / "engine")],
        env={**os.environ, "DOCKER_HOST": nowhere},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"ops/docker/engine: no Docker engine answers at DOCKER_HOST={nowhere}; not starting one elsewhere"
    ]


def test_a_running_engine_is_left_alone_and_unchanged_images_are_reused() -> None:
    require_docker()
    engine = subprocess.run(
        [str(REPO / "ops" / "docker" / "engine")], capture_output=True, text=True, timeout=60, check=False
    )
    assert engine.returncode == 0, engine.stderr
    assert "a Docker engine answers" in engine.stderr and "left as it is" in engine.stderr
    images = REPO / "ops" / "docker" / "images"
    tags = subprocess.run([str(images), "--print"], capture_output=True, text=True, timeout=120, check=True)
    # Up to date first (./ops/test just built them; after an edit here this builds), then nothing to do.
    first = subprocess.run([str(images)], capture_output=True, text=True, timeout=600, check=False)
    assert first.returncode == 0, first.stderr
    again = subprocess.run([str(images)], capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 0, again.stderr
    for tag in tags.stdout.split():
        assert f"ops/docker/images: {tag} is up to date" in again.stderr, again.stderr
    assert "building" not in again.stderr
