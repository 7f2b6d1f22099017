"""The local runner's rules (ops/compose): parsing, order, the compose → process mapping, supervision.

The mapping is table-driven over small compose documents; the supervisor runs
tiny Python processes to show compose's semantics: conditions, a failed
dependency, restart policies, and a stop that leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ops.compose.localize import LocalService, Plan, Settings, plan, with_prefix
from ops.compose.model import ComposeError, ComposeFile, Healthcheck, duration, parse
from ops.compose.order import levels, start_order, stop_waves
from ops.compose.supervisor import StackError, Supervisor
from tests.support.eventually import eventually
from tests.support.processes import alive

BROKER = "127.0.0.1:40000"


def compose(tmp_path: Path, services: dict[str, Any], volumes: tuple[str, ...] = ()) -> ComposeFile:
    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.11-slim\nENV A=1 \\\n    B="two words"\nWORKDIR /srv\nWORKDIR app\nENTRYPOINT ["draplane"]\n'
    )
    document = {"services": services, "volumes": {v: None for v in volumes}}
    return parse(document, tmp_path / "docker-compose.yml")


def built(**spec: Any) -> dict[str, Any]:
    return {"image": "draplane:local", "build": {"context": "."}, **spec}


KAFKA = {"image": "apache/kafka:4.1.1"}


def ports() -> Iterator[int]:
    yield from range(50001, 50100)


def localize(tmp_path: Path, services: dict[str, Any], volumes: tuple[str, ...] = (), **settings: Any) -> Plan:
    counter = ports()
    return plan(
        compose(tmp_path, services, volumes),
        Settings(BROKER, tmp_path / "work", bin_dir=Path(sys.executable).parent, **settings),
        allocate=lambda: next(counter),
    )


# -- parsing -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("service", "message"),
    [
        ({**KAFKA, "network_mode": "host"}, "does not support network_mode"),
        (built(command="run ${X}"), "interpolation"),
        (built(environment={"FLAG": True}), "quote boolean"),
        (built(volumes=["undeclared:/data"]), "volume 'undeclared' is not declared"),
        (built(depends_on=["ghost"]), "undefined service ghost"),
        (built(restart="sometimes"), "unknown restart policy"),
        (built(depends_on={"kafka": {"condition": "service_ready"}}), "unknown condition"),
        (built(volumes=["/anonymous"]), "anonymous volume"),
        (built(healthcheck={"test": ["RUN", "x"]}), "must be a string or a list starting with CMD"),
        ({"command": "x"}, "needs an image or a build"),
    ],
)
def test_the_runner_refuses_what_it_cannot_reproduce(tmp_path: Path, service: dict[str, Any], message: str) -> None:
    with pytest.raises(ComposeError, match=message):
        compose(tmp_path, {"kafka": KAFKA, "svc": service})


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("10s", 10.0), ("1m30s", 90.0), ("500ms", 0.5), ("1h", 3600.0), (5, 5.0), ("1.5s", 1.5)],
)
def test_durations(text: object, seconds: float) -> None:
    assert duration(text, "x") == seconds


@pytest.mark.parametrize("text", ["10", "ten seconds", "10s 5", "s"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ComposeError, match="not a duration"):
        duration(text, "x")


def test_short_and_long_syntax_mean_the_same(tmp_path: Path) -> None:
    file = compose(
        tmp_path,
        {
            "a": built(
                command="apiserver --listen '0.0.0.0:8080'",
                environment=["K=v", "EMPTY="],
                ports=["127.0.0.1:8080:8080", "9000:9001", "7000", {"target": 6000, "published": 6001}],
                expose=["9090", 8080],
                depends_on=["b"],
                healthcheck={"test": "curl -f localhost:8080", "interval": "2s"},
            ),
            "b": built(restart="on-failure:3", healthcheck={"disable": True}),
        },
    )
    a = file.services["a"]
    assert a.command == ("apiserver", "--listen", "0.0.0.0:8080")
    assert a.environment == {"K": "v", "EMPTY": ""}
    assert [(p.target, p.published, p.host_ip) for p in a.ports] == [
        (8080, 8080, "127.0.0.1"),
        (9001, 9000, None),
        (7000, 0, None),
        (6000, 6001, None),
        (9090, None, None),
    ]
    assert a.depends_on == {"b": "service_started"}
    assert a.healthcheck == Healthcheck(test=("CMD-SHELL", "curl -f localhost:8080"), interval=2.0)
    assert file.services["b"].healthcheck is None
    image = file.image_of(a)
    assert image is not None
    assert image.entrypoint == ("draplane",) and image.workdir == "/srv/app"
    assert image.env == {"A": "1", "B": "two words"}


# -- order ---------------------------------------------------------------------


def test_start_order_follows_dependencies_and_keeps_the_files_order() -> None:
    graph = {"api": ["init"], "init": ["kafka"], "kafka": [], "sched": ["api"], "drv": ["api"], "agent": ["drv"]}
    assert start_order(graph) == ["kafka", "init", "api", "sched", "drv", "agent"]
    assert levels(graph) == {"kafka": 0, "init": 1, "api": 2, "sched": 3, "drv": 3, "agent": 4}
    assert stop_waves(graph) == [["agent"], ["sched", "drv"], ["api"], ["init"], ["kafka"]]


def test_a_dependency_cycle_is_named() -> None:
    with pytest.raises(ComposeError, match="dependency cycle among services: a, b"):
        start_order({"a": ["b"], "b": ["a"], "c": []})


# -- the mapping ---------------------------------------------------------------


def test_the_broker_stands_in_for_the_kafka_service_with_the_prefix(tmp_path: Path) -> None:
    local = localize(
        tmp_path,
        {
            "kafka": KAFKA,
            "api": built(
                command=["apiserver", "--bus", "kafka://kafka:9092", "--peer=kafka:9092"],
                environment={"DRAPLANE_BUS": "kafka://kafka:9092?linger_ms=5"},
                depends_on={"kafka": {"condition": "service_healthy"}},
            ),
        },
        prefix="t1-",
    )
    assert local.external == {"kafka": BROKER}
    api = local.services["api"]
    assert api.argv[1:] == ("apiserver", "--bus", f"kafka://{BROKER}?prefix=t1-", f"--peer={BROKER}")
    assert api.compose_env["DRAPLANE_BUS"] == f"kafka://{BROKER}?linger_ms=5&prefix=t1-"
    assert api.depends_on == {}, "the broker answers before anything starts"
    assert api.argv[0] == str(Path(sys.executable).parent / "draplane"), "the image's entrypoint, from the venv"


def test_with_prefix_keeps_an_existing_prefix_behind_ours() -> None:
    assert with_prefix("kafka://h:1?prefix=app-", "t-") == "kafka://h:1?prefix=t-app-"


def test_ports_get_host_ports_and_every_reference_follows(tmp_path: Path) -> None:
    services = {
        "api": built(
            command=["apiserver", "--listen", "0.0.0.0:8080", "--metrics-listen", "localhost:9090"],
            ports=["127.0.0.1:8080:8080"],
            expose=["9090"],
            healthcheck={"test": ["CMD", "python", "-c", "probe", "http://127.0.0.1:9090/healthz"]},
        ),
        "client": built(command=["client", "--server", "http://api:8080", "--other", "example.com:8080"]),
    }
    local = localize(tmp_path, services)
    api, client = local.services["api"], local.services["client"]
    assert api.ports == {8080: 8080, 9090: 50001}, "published ports keep their host port; exposed ones get a free one"
    assert api.published == {8080: 8080}
    assert api.argv[1:] == ("apiserver", "--listen", "127.0.0.1:8080", "--metrics-listen", "127.0.0.1:50001")
    assert api.health == (sys.executable.rsplit("/", 1)[0] + "/python", "-c", "probe", "http://127.0.0.1:50001/healthz")
    assert client.argv[1:] == ("client", "--server", "http://127.0.0.1:8080", "--other", "example.com:8080")

    free = localize(tmp_path, services, free_ports=True)
    assert free.services["api"].ports == {8080: 50001, 9090: 50002}
    assert free.services["client"].argv[3] == "http://127.0.0.1:50001"


def test_each_port_gets_its_own_host_port_even_when_the_os_repeats_itself(tmp_path: Path) -> None:
    offers = iter([8080, 50001, 50001, 50001, 50002])  # 8080 is published by "api"
    local = plan(
        compose(
            tmp_path, {"api": built(ports=["8080:8080"]), "a": built(expose=["9090"]), "b": built(expose=["9090"])}
        ),
        Settings(BROKER, tmp_path / "work"),
        allocate=lambda: next(offers),
    )
    assert [dict(s.ports) for s in local.services.values()] == [{8080: 8080}, {9090: 50001}, {9090: 50002}]


def test_two_services_publishing_one_host_port_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ComposeError, match="both publish host port 8080"):
        localize(tmp_path, {"a": built(ports=["8080:80"]), "b": built(ports=["8080:81"])})


def test_volumes_are_directories_and_other_absolute_paths_a_private_root(tmp_path: Path) -> None:
    local = localize(
        tmp_path,
        {
            "drv": built(
                command=["driver", "--state-dir", "/var/lib/x/node", "--inventory=/etc/inv.yaml", "--data", "rel"],
                environment={"STATE": "/var/lib/x", "CFG": "/cfg/a", "NAME": "node-1"},
                volumes=["node-1:/var/lib/x", "./conf:/cfg:ro"],
            ),
            "agent": built(command=["nodeagent", "--state-dir", "/var/lib/x/node"], volumes=["node-1:/var/lib/x"]),
        },
        volumes=("node-1",),
    )
    work = (tmp_path / "work").resolve()
    drv, agent = local.services["drv"], local.services["agent"]
    assert drv.argv[1:] == (
        "driver",
        "--state-dir",
        f"{work}/volumes/node-1/node",
        f"--inventory={work}/services/drv/root/etc/inv.yaml",
        "--data",
        "rel",
    )
    assert agent.argv[3] == drv.argv[3], "one named volume, one directory, shared"
    assert drv.compose_env["STATE"] == f"{work}/volumes/node-1"
    assert drv.compose_env["CFG"] == f"{tmp_path.resolve()}/conf/a", "a bind mount is its host path"
    assert drv.compose_env["NAME"] == "node-1"
    assert drv.cwd == work / "services" / "drv" / "root" / "srv" / "app", "the image's WORKDIR"
    assert work / "volumes" / "node-1" in drv.dirs


def test_the_environment_is_the_dockerfiles_then_the_services_without_the_hosts_draplane_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRAPLANE_BUS", "sqlite:///host.db")
    monkeypatch.setenv("NODE_NAME", "the-host")
    monkeypatch.setenv("UNRELATED", "kept")
    local = localize(tmp_path, {"a": built(environment={"NODE_NAME": "node-1", "A": "override"}), "b": built()})
    a, b = local.services["a"].env, local.services["b"].env
    assert a["NODE_NAME"] == "node-1" and a["A"] == "override" and a["B"] == "two words"
    assert "DRAPLANE_BUS" not in a and "DRAPLANE_BUS" not in b
    assert "NODE_NAME" not in b, "a variable some service sets is never inherited from the host"
    assert b["UNRELATED"] == "kept"


def test_only_the_broker_may_be_a_pulled_image(tmp_path: Path) -> None:
    with pytest.raises(ComposeError, match="cannot run image 'postgres:16'"):
        localize(tmp_path, {"db": {"image": "postgres:16"}})


# -- the supervisor ------------------------------------------------------------


def process(
    tmp_path: Path,
    name: str,
    code: str,
    *,
    depends_on: dict[str, str] | None = None,
    restart: str = "unless-stopped",
    health: str | None = None,
) -> LocalService:
    check = Healthcheck(test=("CMD",), interval=0.1, timeout=5, retries=2, start_period=5, start_interval=0.05)
    return LocalService(
        name=name,
        argv=(sys.executable, "-c", code),
        env=dict(os.environ),
        compose_env={},
        cwd=tmp_path,
        health=(sys.executable, "-c", health) if health else None,
        healthcheck=check if health else None,
        ports={},
        published={},
        dirs=(tmp_path,),
        depends_on=depends_on or {},
        restart=restart,
        stop_grace_period=5.0,
        log=tmp_path / "logs" / f"{name}.log",
    )


@pytest.fixture(autouse=True)
def _collect_subprocess_transports() -> Iterator[None]:
    """Finalize this test's asyncio subprocess transports now, while their loop is known to be closed cleanly."""
    yield
    gc.collect()


def supervisor(*services: LocalService) -> tuple[Supervisor, list[str]]:
    events: list[str] = []
    stack = Plan(services={s.name: s for s in services}, external={}, order=tuple(s.name for s in services))
    return Supervisor(stack, report=events.append), events


# The flag is touched once the SIGTERM handler is in place (a SIGTERM before it would end the child with -15).
SERVE = "import signal, sys, time, pathlib; signal.signal(signal.SIGTERM, lambda *_: sys.exit(0)); pathlib.Path({flag!r}).touch(); time.sleep(600)"
FLAG_EXISTS = "import pathlib, sys; sys.exit(0 if pathlib.Path({flag!r}).exists() else 1)"


async def test_conditions_order_the_start_and_down_stops_dependents_first(tmp_path: Path) -> None:
    flag = str(tmp_path / "served")
    init = process(tmp_path, "init", "print('init done')", restart="no")
    server = process(
        tmp_path,
        "server",
        SERVE.format(flag=flag),
        depends_on={"init": "service_completed_successfully"},
        health=FLAG_EXISTS.format(flag=flag),
    )
    client = process(tmp_path, "client", SERVE.format(flag=flag + "2"), depends_on={"server": "service_healthy"})
    stack, events = supervisor(init, server, client)
    try:
        await asyncio.wait_for(stack.up(), 60)
        status = stack.status()
        assert [e.split(" (")[0] for e in events] == [
            "init started",
            "init exited",
            "server started",
            "server healthy",
            "client started",
        ]
        assert status["server"]["health"] == "healthy" and status["client"]["running"]
        await eventually(lambda: Path(flag + "2").exists())  # its SIGTERM handler is in place
    finally:
        codes = await stack.down()
    assert codes == {"init": 0, "server": 0, "client": 0}, "SIGTERM, and a clean exit"
    assert [e for e in events if "stopped" in e] == ["client stopped (0)", "server stopped (0)"]
    assert not any(alive(s["pid"]) for s in stack.status().values())
    assert "init done" in (tmp_path / "logs" / "init.log").read_text()


async def test_a_failed_one_shot_fails_up_and_its_dependents_never_start(tmp_path: Path) -> None:
    init = process(tmp_path, "init", "import sys; sys.exit(3)", restart="no")
    server = process(tmp_path, "server", "pass", depends_on={"init": "service_completed_successfully"})
    stack, events = supervisor(init, server)
    try:
        with pytest.raises(StackError, match="init didn't complete successfully: exit 3"):
            await asyncio.wait_for(stack.up(), 60)
    finally:
        await stack.down()
    assert not any(e.startswith("server") for e in events)


async def test_a_service_that_exits_before_it_is_healthy_fails_its_dependents(tmp_path: Path) -> None:
    server = process(tmp_path, "server", "import sys; sys.exit(1)", health="import sys; sys.exit(1)", restart="no")
    client = process(tmp_path, "client", "pass", depends_on={"server": "service_healthy"})
    stack, _ = supervisor(server, client)
    try:
        with pytest.raises(StackError, match=r"server exited \(1\) before it was healthy"):
            await asyncio.wait_for(stack.up(), 60)
    finally:
        await stack.down()


async def test_restart_policies(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    crash_twice = (
        f"import pathlib, sys, time; p = pathlib.Path({str(counter)!r}); n = len(p.read_text()) if p.exists() else 0; "
        "p.write_text('x' * (n + 1)); sys.exit(1) if n < 2 else time.sleep(600)"
    )
    flaky = process(tmp_path, "flaky", crash_twice, restart="on-failure")
    done = process(tmp_path, "done", "pass", restart="on-failure")
    stack, events = supervisor(flaky, done)
    try:
        await asyncio.wait_for(stack.up(), 60)
        await eventually(lambda: counter.exists() and len(counter.read_text()) == 3)
        status = stack.status()
    finally:
        await stack.down()
    assert status["flaky"]["restarts"] == 2 and status["flaky"]["running"]
    assert status["flaky"]["exit_codes"] == [1, 1]
    assert status["done"]["restarts"] == 0, "on-failure does not restart a clean exit"
    assert any(e.startswith("flaky exited (1); restarting") for e in events)
