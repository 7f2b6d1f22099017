"""The parts of a compose file (and of its image's Dockerfile) that the local runner honours.

Why this module exists: the runner must run what docker-compose.yml says, not a
parallel list, so the file is read here into typed values — and anything the
runner could not reproduce faithfully (an unknown service key, variable
interpolation, a bool where compose wants a string) is refused with the
service and key named, instead of being silently dropped.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CONDITIONS = frozenset({"service_started", "service_healthy", "service_completed_successfully"})
RESTART_POLICIES = re.compile(r"^(no|always|unless-stopped|on-failure(:\d+)?)$")

# Service keys the runner implements, and those it knows not to matter for a
# local process (``init``: a local process has the runner as its reaper;
# ``hostname``: reachability is by rewritten addresses, see ``localize``).
HONOURED_KEYS = frozenset(
    {
        "image",
        "build",
        "command",
        "environment",
        "depends_on",
        "healthcheck",
        "restart",
        "ports",
        "expose",
        "volumes",
        "stop_grace_period",
    }
)
IRRELEVANT_KEYS = frozenset({"init", "hostname"})

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(us|ms|s|m|h)")
_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


class ComposeError(ValueError):
    """The compose file is invalid, or asks for something the local runner cannot do."""


@dataclass(frozen=True)
class Build:
    context: Path
    dockerfile: Path


@dataclass(frozen=True)
class Image:
    """What a Dockerfile gives every container of its image: entrypoint, environment, working directory."""

    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    workdir: str = "/"


@dataclass(frozen=True)
class Healthcheck:
    """A healthcheck with compose's defaults (durations in seconds)."""

    test: tuple[str, ...]
    interval: float = 30.0
    timeout: float = 30.0
    retries: int = 3
    start_period: float = 0.0
    start_interval: float = 5.0


@dataclass(frozen=True)
class Port:
    """A port of a service: ``published`` on the host (None: only exposed; 0: on a random host port)."""

    target: int
    published: int | None = None
    host_ip: str | None = None


@dataclass(frozen=True)
class Mount:
    """A volume mount: a named volume, or a host path (bind mount)."""

    source: str
    target: str
    bind: bool = False
    read_only: bool = False


@dataclass(frozen=True)
class Service:
    name: str
    image: str | None
    build: Build | None
    command: tuple[str, ...] | None
    environment: Mapping[str, str]
    depends_on: Mapping[str, str]
    healthcheck: Healthcheck | None
    restart: str
    ports: tuple[Port, ...]
    volumes: tuple[Mount, ...]
    stop_grace_period: float = 10.0

    @property
    def one_shot(self) -> bool:
        """Never restarted: a task others wait on to complete, not a server."""
        return self.restart == "no"

    def container_ports(self) -> list[int]:
        return sorted({p.target for p in self.ports})


@dataclass(frozen=True)
class ComposeFile:
    path: Path
    name: str
    services: Mapping[str, Service]
    volumes: tuple[str, ...]
    images: Mapping[str, Image]

    def image_of(self, service: Service) -> Image | None:
        """The Dockerfile's settings for a service built from one (None for pulled images)."""
        return self.images.get(service.name)


def load(path: Path) -> ComposeFile:
    """Read and check a compose file; ComposeError names the first problem."""
    path = path.resolve()
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ComposeError(f"{path}: {exc}") from None
    return parse(document, path)


def parse(document: Any, path: Path) -> ComposeFile:
    if not isinstance(document, dict) or not isinstance(document.get("services"), dict):
        raise ComposeError(f"{path}: no services")
    _refuse_interpolation(document, "")
    base = path.parent
    services: dict[str, Service] = {}
    for name, spec in document["services"].items():
        if not isinstance(spec, dict):
            raise ComposeError(f"service {name}: expected a mapping")
        services[name] = _service(str(name), spec, base)
    volumes = tuple(str(v) for v in (document.get("volumes") or {}))
    images: dict[str, Image] = {}
    for service in services.values():
        for mount in service.volumes:
            if not mount.bind and mount.source not in volumes:
                raise ComposeError(f"service {service.name}: volume {mount.source!r} is not declared under volumes")
        for dependency in service.depends_on:
            if dependency not in services:
                raise ComposeError(f"service {service.name} depends on undefined service {dependency}")
        if service.build is not None:
            images[service.name] = read_dockerfile(service.build.dockerfile)
    name = str(document.get("name") or base.name)
    return ComposeFile(path=path, name=name, services=services, volumes=volumes, images=images)


def _refuse_interpolation(node: Any, where: str) -> None:
    """Compose substitutes ``${VAR}`` from the environment; the runner does not, so it refuses them."""
    if isinstance(node, dict):
        for key, value in node.items():
            _refuse_interpolation(value, f"{where}.{key}" if where else str(key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _refuse_interpolation(value, f"{where}[{i}]")
    elif isinstance(node, str) and "$" in node.replace("$$", ""):
        raise ComposeError(f"{where}: variable interpolation ({node!r}) is not supported by the local runner")


def _service(name: str, spec: dict[str, Any], base: Path) -> Service:
    unknown = set(spec) - HONOURED_KEYS - IRRELEVANT_KEYS
    if unknown:
        raise ComposeError(f"service {name}: the local runner does not support {', '.join(sorted(unknown))}")
    if "image" not in spec and "build" not in spec:
        raise ComposeError(f"service {name}: needs an image or a build")
    restart = str(spec.get("restart", "no"))
    if not RESTART_POLICIES.match(restart):
        raise ComposeError(f"service {name}: unknown restart policy {restart!r}")
    return Service(
        name=name,
        image=str(spec["image"]) if "image" in spec else None,
        build=_build(name, spec["build"], base) if "build" in spec else None,
        command=_command(name, spec["command"]) if "command" in spec else None,
        environment=_environment(name, spec.get("environment")),
        depends_on=_depends_on(name, spec.get("depends_on")),
        healthcheck=_healthcheck(name, spec.get("healthcheck")),
        restart=restart,
        ports=_ports(name, spec.get("ports") or [], spec.get("expose") or []),
        volumes=tuple(_mount(name, v, base) for v in spec.get("volumes") or []),
        stop_grace_period=duration(spec.get("stop_grace_period", "10s"), f"service {name}: stop_grace_period"),
    )


def _build(name: str, spec: Any, base: Path) -> Build:
    if isinstance(spec, str):
        context, dockerfile = spec, "Dockerfile"
    elif isinstance(spec, dict):
        context, dockerfile = str(spec.get("context", ".")), str(spec.get("dockerfile", "Dockerfile"))
    else:
        raise ComposeError(f"service {name}: build must be a path or a mapping")
    root = (base / context).resolve()
    return Build(context=root, dockerfile=(root / dockerfile).resolve())


def _command(name: str, spec: Any) -> tuple[str, ...]:
    if isinstance(spec, str):
        return tuple(shlex.split(spec))
    if isinstance(spec, list) and all(isinstance(a, str | int | float) and not isinstance(a, bool) for a in spec):
        return tuple(str(a) for a in spec)
    raise ComposeError(f"service {name}: command must be a string or a list of strings")


def _scalar(where: str, value: Any) -> str:
    if isinstance(value, bool):
        raise ComposeError(f"{where}: quote boolean values ({value!r}), as compose requires")
    if isinstance(value, str | int | float):
        return str(value)
    raise ComposeError(f"{where}: expected a string or a number, got {value!r}")


def _environment(name: str, spec: Any) -> dict[str, str]:
    env: dict[str, str] = {}
    if spec is None:
        return env
    if isinstance(spec, dict):
        items = list(spec.items())
    elif isinstance(spec, list):
        items = []
        for entry in spec:
            key, sep, value = str(entry).partition("=")
            items.append((key, value if sep else None))
    else:
        raise ComposeError(f"service {name}: environment must be a mapping or a list")
    for key, value in items:
        if value is None:  # `KEY` alone: the value of the host's environment, if any
            if key in os.environ:
                env[str(key)] = os.environ[key]
            continue
        env[str(key)] = _scalar(f"service {name}: environment {key}", value)
    return env


def _depends_on(name: str, spec: Any) -> dict[str, str]:
    if spec is None:
        return {}
    if isinstance(spec, list):
        return {str(d): "service_started" for d in spec}
    if not isinstance(spec, dict):
        raise ComposeError(f"service {name}: depends_on must be a list or a mapping")
    found: dict[str, str] = {}
    for dependency, options in spec.items():
        condition = (options or {}).get("condition", "service_started")
        if condition not in CONDITIONS:
            raise ComposeError(f"service {name}: unknown condition {condition!r} on {dependency}")
        found[str(dependency)] = str(condition)
    return found


def _healthcheck(name: str, spec: Any) -> Healthcheck | None:
    if spec is None or spec.get("disable"):
        return None
    where = f"service {name}: healthcheck"
    test = spec.get("test")
    if isinstance(test, str):
        argv: tuple[str, ...] = ("CMD-SHELL", test)
    elif isinstance(test, list) and test and test[0] in ("CMD", "CMD-SHELL", "NONE"):
        argv = tuple(_scalar(f"{where} test", a) for a in test)
    else:
        raise ComposeError(f"{where}: test must be a string or a list starting with CMD or CMD-SHELL")
    if argv[0] == "NONE":
        return None
    if argv[0] == "CMD-SHELL" and len(argv) != 2:
        raise ComposeError(f"{where}: CMD-SHELL takes one command string")
    return Healthcheck(
        test=argv,
        interval=duration(spec.get("interval", "30s"), f"{where} interval"),
        timeout=duration(spec.get("timeout", "30s"), f"{where} timeout"),
        retries=int(spec.get("retries", 3)),
        start_period=duration(spec.get("start_period", "0s"), f"{where} start_period"),
        start_interval=duration(spec.get("start_interval", "5s"), f"{where} start_interval"),
    )


def duration(value: Any, where: str) -> float:
    """Compose's durations: ``1m30s``, ``500ms``, ``10s`` (a bare number is seconds)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ComposeError(f"{where}: {value!r} is not a duration such as 10s or 1m30s")
    return sum(float(n) * _UNITS[u] for n, u in parts)


def _ports(name: str, ports: list[Any], expose: list[Any]) -> tuple[Port, ...]:
    found: list[Port] = []
    for spec in ports:
        if isinstance(spec, dict):
            published = spec.get("published")
            found.append(Port(int(spec["target"]), int(published or 0), spec.get("host_ip")))
            continue
        text = str(spec).split("/", 1)[0]
        parts = text.rsplit(":", 2)
        try:
            if len(parts) == 1:
                found.append(Port(int(parts[0]), 0))  # published on a random host port
            elif len(parts) == 2:
                found.append(Port(int(parts[1]), int(parts[0])))
            else:
                found.append(Port(int(parts[2]), int(parts[1]), parts[0].strip("[]")))
        except ValueError:
            raise ComposeError(f"service {name}: port {spec!r} is not [[HOST_IP:]HOST:]CONTAINER") from None
    for spec in expose:
        try:
            target = int(str(spec).split("/", 1)[0])
        except ValueError:
            raise ComposeError(f"service {name}: expose {spec!r} is not a port number") from None
        if all(p.target != target for p in found):
            found.append(Port(target))
    return tuple(found)


def _mount(name: str, spec: Any, base: Path) -> Mount:
    if isinstance(spec, dict):
        source, target = str(spec.get("source", "")), str(spec["target"])
        kind = spec.get("type", "volume")
        read_only = bool(spec.get("read_only", False))
    else:
        parts = str(spec).split(":")
        if len(parts) == 1:
            raise ComposeError(f"service {name}: anonymous volume {spec!r} is not supported; name it")
        source, target = parts[0], parts[1]
        read_only = len(parts) > 2 and "ro" in parts[2].split(",")
        kind = "bind" if source.startswith((".", "/", "~")) else "volume"
    if not target.startswith("/"):
        raise ComposeError(f"service {name}: mount target {target!r} is not an absolute path")
    if kind == "bind":
        return Mount(str((base / os.path.expanduser(source)).resolve()), target, bind=True, read_only=read_only)
    if kind != "volume" or not source:
        raise ComposeError(f"service {name}: only named volumes and bind mounts are supported ({spec!r})")
    return Mount(source, target, read_only=read_only)


def read_dockerfile(path: Path) -> Image:
    """ENTRYPOINT and CMD (exec form), ENV and WORKDIR of the final stage of a Dockerfile."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ComposeError(f"{path}: {exc}") from None
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    env: dict[str, str] = {}
    workdir = "/"
    for instruction, argument in _instructions(text):
        if instruction == "FROM":  # a new stage starts from scratch
            entrypoint, cmd, env, workdir = (), (), {}, "/"
        elif instruction == "ENTRYPOINT":
            entrypoint = _exec_form(path, instruction, argument)
        elif instruction == "CMD":
            cmd = _exec_form(path, instruction, argument)
        elif instruction == "ENV":
            for word in shlex.split(argument):
                key, sep, value = word.partition("=")
                if not sep:
                    raise ComposeError(f"{path}: write ENV as KEY=VALUE ({argument!r})")
                env[key] = value
        elif instruction == "WORKDIR":
            workdir = os.path.join(workdir, argument.strip())
    return Image(entrypoint=entrypoint, cmd=cmd, env=env, workdir=workdir)


def _exec_form(path: Path, instruction: str, argument: str) -> tuple[str, ...]:
    try:
        parsed = json.loads(argument)
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, list) or not all(isinstance(a, str) for a in parsed):
        raise ComposeError(f'{path}: {instruction} must use the exec form, ["program", ...]')
    return tuple(parsed)


def _instructions(text: str) -> list[tuple[str, str]]:
    """Instructions with line continuations joined; comments and heredoc bodies are not expected."""
    joined: list[str] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        joined.append(current + line)
        current = ""
    if current:
        joined.append(current)
    found = []
    for line in joined:
        instruction, _, argument = line.partition(" ")
        found.append((instruction.upper(), argument.strip()))
    return found
