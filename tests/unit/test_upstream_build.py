"""ops/upstreamkit's build plan and waiting, without Go: the generated go.mod, the steps, the cache and the marker."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

import pytest

from ops.upstreamkit import waiting
from ops.upstreamkit.__main__ import _targets
from ops.upstreamkit.build import (
    ALL_TARGETS,
    DEFAULT_TARGETS,
    LOCK_NAME,
    _steps,
    binary_path,
    go_directive,
    kube_go_mod,
    staging_modules,
)
from ops.upstreamkit.versions import ETCD_VERSION, binary_file

KUBE_GO_MOD = """module k8s.io/kubernetes

go 1.22.0

require (
\tk8s.io/api v0.0.0
\tgithub.com/spf13/cobra v1.8.1
)

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/client-go => ./staging/src/k8s.io/client-go
\tgithub.com/example/other => github.com/example/other v1.0.0
)
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "upstream"
    monkeypatch.setenv("DRAPLANE_UPSTREAM_CACHE", str(root))
    for name in (waiting.STATUS_ENV, waiting.LOG_ENV, waiting.REQUIRE_ENV):
        monkeypatch.delenv(name, raising=False)
    return root


def place(name: str, version: str) -> Path:
    path = binary_file(name, version)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_staging_modules_are_the_replaces_into_staging() -> None:
    assert staging_modules(KUBE_GO_MOD) == ["k8s.io/api", "k8s.io/client-go"]
    assert go_directive(KUBE_GO_MOD) == "1.22.0"


def test_the_build_module_pins_staging_modules_to_the_published_v0_release() -> None:
    text = kube_go_mod("1.31.14", staging=["k8s.io/api", "k8s.io/client-go"], go="1.22.0")
    assert "require k8s.io/kubernetes v1.31.14" in text
    assert "\tk8s.io/api => k8s.io/api v0.31.14" in text
    assert "\tk8s.io/client-go => k8s.io/client-go v0.31.14" in text
    assert "go 1.22.0" in text
    # The proxy does not serve k8s.io/kube-scheduler v0.31.14: the patch before it builds 1.31.14.
    kube_scheduler = kube_go_mod("1.31.14", staging=["k8s.io/kube-scheduler"], go="1.22.0")
    assert "\tk8s.io/kube-scheduler => k8s.io/kube-scheduler v0.31.13" in kube_scheduler
    assert "k8s.io/kube-scheduler => k8s.io/kube-scheduler v0.37.2" in kube_go_mod(
        "1.37.2", staging=["k8s.io/kube-scheduler"], go="1.26.0"
    )


@pytest.mark.parametrize(
    ("targets", "steps"),
    [
        (
            DEFAULT_TARGETS,
            [
                ("1.31.14", ["kube-apiserver"]),
                ("etcd", [ETCD_VERSION]),
                ("1.31.14", ["kube-scheduler", "kube-controller-manager"]),
            ],
        ),
        (
            ALL_TARGETS[-3:],
            [("1.37.2", ["kube-apiserver", "kube-scheduler", "kube-controller-manager"])],
        ),
        (
            [("kube-scheduler", "1.31.14"), ("kube-controller-manager", "1.31.14")],
            [("1.31.14", ["kube-scheduler", "kube-controller-manager"])],
        ),
    ],
)
def test_steps_keep_the_order_and_share_one_go_build_per_version(
    targets: list[tuple[str, str]], steps: list[tuple[str, list[str]]]
) -> None:
    assert _steps(targets) == steps


def test_the_command_line_versions_choose_targets() -> None:
    assert _targets(None, everything=False) == list(DEFAULT_TARGETS)
    assert _targets(None, everything=True) == list(ALL_TARGETS)
    assert _targets(["v1.37.2"], everything=False) == [
        ("kube-apiserver", "1.37.2"),
        ("kube-scheduler", "1.37.2"),
        ("kube-controller-manager", "1.37.2"),
    ]
    assert ("etcd", ETCD_VERSION) in _targets(["1.31.14"], everything=False)


def test_binary_path_says_how_to_build_what_is_missing(cache: Path) -> None:
    path, reason = binary_path("kube-scheduler", "1.37.2")
    assert path is None
    assert reason is not None and "ops/upstream build --version 1.37.2" in reason
    built = place("kube-scheduler", "v1.37.2")
    assert binary_path("kube-scheduler", "1.37.2") == (built, None)
    assert built == cache / "v1.37.2" / "kube-scheduler"
    assert binary_file("etcd") == cache / "etcd" / f"v{ETCD_VERSION}" / "etcd"


def test_waiting_returns_the_cached_binaries_at_once(cache: Path) -> None:
    paths = {target: place(*target) for target in DEFAULT_TARGETS}
    assert waiting.wait_for_build(DEFAULT_TARGETS, timeout=0) == paths


def test_a_failed_background_build_fails_with_its_log_when_required(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    status, log = tmp_path / "status", tmp_path / "build.log"
    log.write_text("go: downloading x\nupstream: FAILED kube-apiserver v1.31.14: exited 1\n")
    monkeypatch.setenv(waiting.STATUS_ENV, str(status))
    monkeypatch.setenv(waiting.LOG_ENV, str(log))
    monkeypatch.setenv(waiting.REQUIRE_ENV, "1")
    monkeypatch.setattr(waiting, "go_binary", lambda: "/usr/bin/go")
    finish = threading.Timer(0.2, lambda: status.write_text("1\n"))
    finish.start()
    result = waiting.wait_for_build(DEFAULT_TARGETS, timeout=30, poll=0.05)
    finish.join()
    assert isinstance(result, waiting.Unavailable)
    assert result.required
    assert "exited 1" in result.reason and "FAILED kube-apiserver" in result.reason


def test_a_finished_background_build_hands_over_its_binaries(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    status = tmp_path / "status"
    monkeypatch.setenv(waiting.STATUS_ENV, str(status))

    def finish() -> None:
        for target in DEFAULT_TARGETS:
            place(*target)
        status.write_text("0\n")

    timer = threading.Timer(0.2, finish)
    timer.start()
    result = waiting.wait_for_build(DEFAULT_TARGETS, timeout=30, poll=0.05)
    timer.join()
    assert result == {target: binary_file(*target) for target in DEFAULT_TARGETS}


def test_without_go_the_test_skips_rather_than_fails(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(waiting.REQUIRE_ENV, "1")
    monkeypatch.setattr(waiting, "go_binary", lambda: None)
    result = waiting.wait_for_build(DEFAULT_TARGETS, timeout=0)
    assert isinstance(result, waiting.Unavailable)
    assert not result.required


def test_plain_pytest_waits_for_a_build_holding_the_lock(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waiting, "go_binary", lambda: "/usr/bin/go")
    cache.mkdir(parents=True)
    handle = open(cache / LOCK_NAME, "a")  # released by the timer
    fcntl.flock(handle, fcntl.LOCK_EX)

    def finish() -> None:
        for target in DEFAULT_TARGETS:
            place(*target)
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()

    timer = threading.Timer(0.2, finish)
    timer.start()
    result = waiting.wait_for_build(DEFAULT_TARGETS, timeout=30, poll=0.05)
    timer.join()
    assert isinstance(result, dict) and len(result) == len(DEFAULT_TARGETS)
    assert all(os.access(path, os.X_OK) for path in result.values())


def test_the_scheduler_config_changes_only_the_connection() -> None:
    from ops.upstreamkit.run import scheduler_config

    default = scheduler_config(Path("/k/config"), content_type=None)
    assert default == {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": "/k/config"},
    }
    json_config = scheduler_config(Path("/k/config"), content_type="application/json")
    assert json_config["clientConnection"] == {"kubeconfig": "/k/config", "contentType": "application/json"}
