"""`/healthz` as Kubernetes components answer it: named checks, ``ok`` or 500 naming the checks that failed.

Why this module exists: a component's health is more than "the informer
caught up" — a task of it that died makes it unhealthy too, and a probe (a
compose healthcheck, a kubelet) must see which check failed. The wording is
k8s.io/apiserver's ``pkg/server/healthz`` (``handleRootHealth`` and
``adaptCheckToHandler``): ``/healthz`` answers ``ok`` when every check passes,
else 500 with one ``[+]<name> ok`` / ``[-]<name> failed: reason withheld``
line per check and ``healthz check failed``; the reason itself is served on
``/healthz/<name>`` (``internal server error: <reason>``) and is in the log.
With no checks a ``ping`` check answers, as there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from aiohttp import web


class HealthCheck(NamedTuple):
    """One named check: ``check()`` is None when healthy, else why not."""

    name: str
    check: Callable[[], str | None]


PING = HealthCheck("ping", lambda: None)


def ready_check(name: str, ready: Callable[[], bool], *, reason: str) -> HealthCheck:
    """A check that fails with ``reason`` until ``ready()`` holds."""
    return HealthCheck(name, lambda: None if ready() else reason)


def root_health(checks: Sequence[HealthCheck], *, verbose: bool = False, name: str = "healthz") -> tuple[int, str]:
    """(HTTP status, body) of ``/healthz`` over ``checks``."""
    lines, failed = [], False
    for check in checks or (PING,):
        if check.check() is None:
            lines.append(f"[+]{check.name} ok\n")
        else:
            failed = True
            lines.append(f"[-]{check.name} failed: reason withheld\n")
    if failed:
        return 500, "".join(lines) + f"{name} check failed\n"
    return 200, "".join(lines) + f"{name} check passed\n" if verbose else "ok"


def one_health(check: HealthCheck) -> tuple[int, str]:
    """(HTTP status, body) of ``/healthz/<name>``: the reason is shown here."""
    reason = check.check()
    return (200, "ok") if reason is None else (500, f"internal server error: {reason}\n")


def add_healthz(app: web.Application, checks: Sequence[HealthCheck]) -> None:
    """Route ``/healthz`` and ``/healthz/<name>`` of each check on ``app``."""

    def answer(status: int, body: str) -> web.Response:
        headers = {"X-Content-Type-Options": "nosniff"}
        return web.Response(status=status, text=body, content_type="text/plain", headers=headers)

    async def root(request: web.Request) -> web.Response:
        return answer(*root_health(checks, verbose="verbose" in request.query))

    app.router.add_get("/healthz", root)
    for check in checks or (PING,):

        async def one(_: web.Request, check: HealthCheck = check) -> web.Response:
            return answer(*one_health(check))

        app.router.add_get(f"/healthz/{check.name}", one)
