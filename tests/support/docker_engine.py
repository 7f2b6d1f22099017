"""Whether the Docker tests can run here: an engine, the project's images, a compose command.

The compose e2e and the testcontainers e2e need a Docker engine that answers
and the images ``ops/docker/images`` builds (no registry serves them). When
something is missing they skip with the reason — or fail, when
``DRAPLANE_REQUIRE_DOCKER=1`` says the engine and images must be there
(``./ops/test`` sets it once ``ops/docker/engine`` and ``ops/docker/images``
succeeded).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from services.testing.backends import docker_problem

REQUIRE_ENV = "DRAPLANE_REQUIRE_DOCKER"
IMAGES = ("draplane:local", "draplane-kafka:local")


def missing_image(images: tuple[str, ...] = IMAGES) -> str | None:
    for image in images:
        result = subprocess.run(["docker", "image", "inspect", image], capture_output=True, check=False)
        if result.returncode != 0:
            return f"the image {image} is not on the Docker engine (ops/docker/images builds it)"
    return None


def compose_command() -> list[str] | None:
    """``docker compose`` (v2) when the plugin answers, else Debian's ``docker-compose`` (1.29), else None."""
    if shutil.which("docker") and subprocess.run(
        ["docker", "compose", "version"], capture_output=True, check=False
    ).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def require_docker(*, compose: bool = False) -> list[str]:
    """Skip (or fail under DRAPLANE_REQUIRE_DOCKER=1) unless the engine and images are here; the compose command."""
    problem = docker_problem() if shutil.which("docker") else "no docker command on PATH"
    problem = problem or missing_image()
    command = compose_command() if compose else []
    if problem is None and command is None:
        problem = "neither `docker compose` nor `docker-compose` is installed"
    if problem is not None:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1, but {problem}")
        pytest.skip(problem)
    return command or []
