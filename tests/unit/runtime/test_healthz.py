"""/healthz bodies as k8s.io/apiserver's pkg/server/healthz words them (handleRootHealth, adaptCheckToHandler)."""

from __future__ import annotations

import pytest

from services.runtime.healthz import HealthCheck, one_health, root_health

OK = HealthCheck("informer-sync", lambda: None)
DEAD = HealthCheck("scheduler", lambda: "scheduler was cancelled")


@pytest.mark.parametrize(
    ("checks", "verbose", "status", "body"),
    [
        ([OK], False, 200, "ok"),
        ([OK], True, 200, "[+]informer-sync ok\nhealthz check passed\n"),
        ([], True, 200, "[+]ping ok\nhealthz check passed\n"),  # no checks: kube installs ping
        ([OK, DEAD], False, 500, "[+]informer-sync ok\n[-]scheduler failed: reason withheld\nhealthz check failed\n"),
        ([DEAD, OK], True, 500, "[-]scheduler failed: reason withheld\n[+]informer-sync ok\nhealthz check failed\n"),
    ],
)
def test_root_health(checks: list[HealthCheck], verbose: bool, status: int, body: str) -> None:
    assert root_health(checks, verbose=verbose) == (status, body)


@pytest.mark.parametrize(
    ("check", "answer"),
    [(OK, (200, "ok")), (DEAD, (500, "internal server error: scheduler was cancelled\n"))],
)
def test_one_check_shows_its_reason(check: HealthCheck, answer: tuple[int, str]) -> None:
    assert one_health(check) == answer
