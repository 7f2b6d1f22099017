"""How a compose service becomes a local process: the substitutions, in one place.

Why this module exists: the runner's claim is that it runs docker-compose.yml's
services as they are written. Everything a container has that a local process
lacks is replaced here by a fixed rule, and by nothing else:

- **program**: the service's ``entrypoint`` + ``command`` (or the Dockerfile's
  ENTRYPOINT + CMD). The program — ``draplane`` for the image, ``python`` in a
  healthcheck — is the one beside the runner's Python (the venv), else on PATH.
- **the broker**: the Kafka service (image ``draplane-kafka``, which
  ops/docker/images builds, or ``apache/kafka``) is not run; every ``<that service>:<port>`` becomes the
  local broker's address, and ``kafka://`` URLs get the ``prefix`` option when
  one is given (several stacks then share one broker without meeting).
- **ports**: containers have their own network namespace, locally all
  processes share one. Each service port (``ports`` and ``expose``) gets a
  host port: the published one, or a free one (always for exposed-only ports,
  and for published ones with ``free_ports``). ``0.0.0.0:P``, ``127.0.0.1:P``
  and ``localhost:P`` in a service's own command, environment and healthcheck,
  and ``<service>:P`` anywhere, become ``127.0.0.1:<host port>``.
- **files**: a named volume is ``<workdir>/volumes/<name>`` (shared by every
  service that mounts it, as in compose), a bind mount its host path. An
  absolute path in an argument or environment value under a mount target moves
  with the mount; any other absolute path is the container's private
  filesystem, ``<workdir>/services/<service>/root/<path>``. The process runs in
  the image's WORKDIR, mapped the same way.
- **environment**: the runner's environment without ``DRAPLANE_*`` and without
  any variable a service sets, then the Dockerfile's ENV, then the service's
  ``environment`` (rewritten as above).

Ports are allocated by a callable, so the mapping is a pure function of the
compose file and these settings (``python -m ops.compose --print`` shows it).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ops.compose.model import ComposeError, ComposeFile, Healthcheck, Image, Service
from ops.compose.order import start_order

# The project's Kafka image (ops/docker/images), and Apache's.
BROKER_IMAGES = ("draplane-kafka", "apache/kafka")
LOCAL_HOSTS = frozenset({"0.0.0.0", "127.0.0.1", "localhost"})
LOOPBACK = "127.0.0.1"

_ADDRESS = re.compile(r"(?<![\w.-])([A-Za-z0-9][\w.-]*):(\d{1,5})(?!\d)")
_KAFKA_URL = re.compile(r"kafka://[^\s\"']+")


@dataclass(frozen=True)
class Settings:
    broker: str
    workdir: Path
    prefix: str = ""
    free_ports: bool = False
    bin_dir: Path = Path(sys.executable).parent


@dataclass(frozen=True)
class LocalService:
    """One compose service as a local process."""

    name: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    compose_env: Mapping[str, str]
    cwd: Path
    health: tuple[str, ...] | None
    healthcheck: Healthcheck | None
    ports: Mapping[int, int]
    published: Mapping[int, int]
    dirs: tuple[Path, ...]
    depends_on: Mapping[str, str]
    restart: str
    stop_grace_period: float
    log: Path

    @property
    def one_shot(self) -> bool:
        return self.restart == "no"


@dataclass(frozen=True)
class Plan:
    """Every service to run, in start order, and what stands in for the others."""

    services: Mapping[str, LocalService]
    external: Mapping[str, str]
    order: tuple[str, ...]


def is_broker(service: Service) -> bool:
    return service.build is None and (service.image or "").startswith(BROKER_IMAGES)


def plan(compose: ComposeFile, settings: Settings, *, allocate: Callable[[], int]) -> Plan:
    """The local processes for ``compose``; ``allocate`` returns a free host port."""
    external: dict[str, str] = {}
    local: list[Service] = []
    for service in compose.services.values():
        if is_broker(service):
            external[service.name] = settings.broker
        elif service.build is None:
            raise ComposeError(
                f"service {service.name}: the local runner runs services built from the project's "
                f"Dockerfile and stands the local broker in for {', '.join(BROKER_IMAGES)}; "
                f"it cannot run image {service.image!r}"
            )
        else:
            local.append(service)
    taken: dict[int, str] = {}
    if not settings.free_ports:
        for service in local:
            for port in service.ports:
                if port.published:
                    if port.published in taken:
                        raise ComposeError(
                            f"services {taken[port.published]} and {service.name} both publish host port "
                            f"{port.published}"
                        )
                    taken[port.published] = service.name

    def unique() -> int:
        """A free port no other service got (an OS may hand the same free port out twice)."""
        for _ in range(100):
            port = allocate()
            if port not in taken:
                return port
        raise ComposeError("no free host port found")

    ports: dict[str, dict[int, int]] = {}
    for service in local:
        ports[service.name] = _host_ports(service, settings, unique)
        for host in ports[service.name].values():
            taken.setdefault(host, service.name)
    configured = {key for s in compose.services.values() for key in s.environment}
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("DRAPLANE_") and k not in configured}
    depends = {s.name: [d for d in s.depends_on if d not in external] for s in local}
    order = tuple(start_order(depends))
    by_name = {s.name: s for s in local}
    services = {
        name: _localize(
            by_name[name],
            compose=compose,
            settings=settings,
            ports=ports,
            external=external,
            inherited=inherited,
        )
        for name in order
    }
    return Plan(services=services, external=external, order=order)


def _host_ports(service: Service, settings: Settings, allocate: Callable[[], int]) -> dict[int, int]:
    mapping: dict[int, int] = {}
    for port in service.ports:
        if port.published and not settings.free_ports:
            mapping[port.target] = port.published
        else:
            mapping[port.target] = allocate()
    return mapping


@dataclass(frozen=True)
class _Rewriter:
    """The substitutions for one service's command, environment and healthcheck."""

    own_ports: Mapping[int, int]
    ports: Mapping[str, Mapping[int, int]]
    external: Mapping[str, str]
    prefix: str
    mounts: tuple[tuple[str, Path], ...]  # container path → host path, longest first
    root: Path

    def address(self, text: str) -> str:
        def replace(match: re.Match[str]) -> str:
            host, port = match.group(1), int(match.group(2))
            if host in self.external:
                return self.external[host]
            if host in self.ports and port in self.ports[host]:
                return f"{LOOPBACK}:{self.ports[host][port]}"
            if host in LOCAL_HOSTS and port in self.own_ports:
                return f"{LOOPBACK}:{self.own_ports[port]}"
            return match.group(0)

        text = _ADDRESS.sub(replace, text)
        if self.prefix:
            text = _KAFKA_URL.sub(lambda m: with_prefix(m.group(0), self.prefix), text)
        return text

    def path(self, value: str) -> str:
        if not value.startswith("/"):
            return value
        for target, host in self.mounts:
            if value == target or value.startswith(target.rstrip("/") + "/"):
                rest = value[len(target) :].lstrip("/")
                return str(host / rest) if rest else str(host)
        return str(self.root / value.lstrip("/"))

    def word(self, value: str) -> str:
        """An argument or environment value: addresses, then a path (also after ``--flag=``)."""
        value = self.address(value)
        if value.startswith("-") and "=" in value:
            flag, _, rest = value.partition("=")
            return f"{flag}={self.path(rest)}"
        return self.path(value)


def with_prefix(url: str, prefix: str) -> str:
    """A kafka:// URL with ``prefix`` in front of any prefix it already has."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    query["prefix"] = prefix + query.get("prefix", "")
    return urlunsplit(parts._replace(query=urlencode(query)))


def program(name: str, bin_dir: Path, *, service: str) -> str:
    """The local executable standing in for the image's ``name``: the venv's, else PATH's."""
    base = os.path.basename(name)
    beside = bin_dir / base
    if beside.exists():
        return str(beside)
    found = shutil.which(base)
    if found is None:
        raise ComposeError(f"service {service}: {base!r} is neither in {bin_dir} nor on PATH")
    return found


def _localize(
    service: Service,
    *,
    compose: ComposeFile,
    settings: Settings,
    ports: Mapping[str, Mapping[int, int]],
    external: Mapping[str, str],
    inherited: Mapping[str, str],
) -> LocalService:
    image = compose.image_of(service) or Image()
    workdir = settings.workdir.resolve()
    root = workdir / "services" / service.name / "root"
    mounts = sorted(
        ((m.target, Path(m.source) if m.bind else workdir / "volumes" / m.source) for m in service.volumes),
        key=lambda item: len(item[0]),
        reverse=True,
    )
    rewriter = _Rewriter(
        own_ports=ports[service.name],
        ports=ports,
        external=external,
        prefix=settings.prefix,
        mounts=tuple(mounts),
        root=root,
    )
    words = (*image.entrypoint, *(service.command if service.command is not None else image.cmd))
    if not words:
        raise ComposeError(f"service {service.name}: no command and no ENTRYPOINT/CMD in its Dockerfile")
    argv = (program(words[0], settings.bin_dir, service=service.name), *(rewriter.word(w) for w in words[1:]))
    compose_env = {**image.env, **{k: rewriter.word(v) for k, v in service.environment.items()}}
    health: tuple[str, ...] | None = None
    if service.healthcheck is not None:
        test = service.healthcheck.test
        if test[0] == "CMD":
            if len(test) < 2:
                raise ComposeError(f"service {service.name}: healthcheck CMD without a program")
            health = (
                program(test[1], settings.bin_dir, service=service.name),
                *(rewriter.word(w) for w in test[2:]),
            )
        else:
            health = ("sh", "-c", rewriter.address(test[1]))
    cwd = Path(rewriter.path(image.workdir))
    dirs = tuple(dict.fromkeys([*(host for _, host in mounts), root, cwd]))
    return LocalService(
        name=service.name,
        argv=argv,
        env={**inherited, **compose_env},
        compose_env=compose_env,
        cwd=cwd,
        health=health,
        healthcheck=service.healthcheck,
        ports=dict(ports[service.name]),
        published={p.target: ports[service.name][p.target] for p in service.ports if p.published is not None},
        dirs=dirs,
        depends_on={d: c for d, c in service.depends_on.items() if d not in external},
        restart=service.restart,
        stop_grace_period=service.stop_grace_period,
        log=workdir / "logs" / f"{service.name}.log",
    )
