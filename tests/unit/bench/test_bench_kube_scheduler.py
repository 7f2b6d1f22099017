"""The pure parts of ``ops/bench/scheduler.py --scheduler kube|both``: kube-scheduler's config and flags, the ratio line.

The QPS/burst pair is scheduler_perf's (``test/integration/scheduler_perf/util.go``,
``mustSetupCluster``: ``cfg.QPS = 5000.0; cfg.Burst = 5000`` in 1.31.14 and 1.37.2).
That the rendered files start a real kube-scheduler is
``tests/e2e/test_bench_kube_scheduler_e2e.py``'s part.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from ops.bench import kube_scheduler as ks
from ops.bench import scheduler as bench
from services.apiserver.http.auth import TokenAuthenticator


@pytest.mark.parametrize(("version", "release"), [("1.31.14", "1.31"), ("1.37.2", "1.37")])
def test_the_stack_runs_at_the_kube_schedulers_release(version: str, release: str) -> None:
    assert ks.release_of(version) == release


@pytest.mark.parametrize(
    ("version", "gate"),
    [
        ("1.31.14", ["--feature-gates=DynamicResourceAllocation=true"]),  # alpha at 1.31, off by default
        ("1.37.2", []),  # GA since 1.34: no gate to set
    ],
)
def test_flags_are_the_config_the_port_and_draS_gate_where_it_is_one(
    version: str, gate: list[str], tmp_path: Path
) -> None:
    config = tmp_path / "c.yaml"
    assert ks.scheduler_args(version, config=config, port=10999) == [
        f"--config={config}",
        "--bind-address=127.0.0.1",
        "--secure-port=10999",
        *gate,
    ]


def test_the_config_has_scheduler_perfs_client_qps_json_and_no_leader_election(tmp_path: Path) -> None:
    config_path = ks.write_config(tmp_path, server="https://127.0.0.1:1234", token="t0k", ca_file=tmp_path / "ca.crt")
    config = yaml.safe_load(config_path.read_text())
    assert config == {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {
            "kubeconfig": str(tmp_path / "kube-scheduler.kubeconfig"),
            "qps": 5000.0,
            "burst": 5000,
            "contentType": "application/json",
        },
        "leaderElection": {"leaderElect": False},
    }
    kubeconfig = yaml.safe_load(Path(config["clientConnection"]["kubeconfig"]).read_text())
    assert kubeconfig["clusters"][0]["cluster"] == {
        "server": "https://127.0.0.1:1234",
        "certificate-authority": str(tmp_path / "ca.crt"),
    }
    assert kubeconfig["users"][0]["user"] == {"token": "t0k"}
    assert kubeconfig["contexts"][0]["context"] == {"cluster": "draplane", "user": "kube-scheduler"}


def test_protobuf_is_kubes_own_content_type(tmp_path: Path) -> None:
    config = ks.scheduler_config(tmp_path / "k", wire="protobuf")
    assert config["clientConnection"]["contentType"] == "application/vnd.kubernetes.protobuf"
    assert ks.label("1.37.2", wire="protobuf").startswith("kube-scheduler 1.37.2 (protobuf, client qps 5000/")


def test_the_token_file_row_authenticates_as_kube_schedulers_user() -> None:
    user = TokenAuthenticator.from_text(ks.token_file_line("s3cret")).authenticate("s3cret")
    assert user is not None and user.name == "system:kube-scheduler"
    assert user.groups == ("system:authenticated",)


def test_the_binary_comes_from_ops_upstreams_cache_or_a_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRAPLANE_UPSTREAM_CACHE", str(tmp_path))
    path, why = ks.binary("1.31.14")
    assert path is None and f"{tmp_path}/v1.31.14/kube-scheduler is not built" in why and "ops/upstream build" in why
    assert ks.default_version() == "1.31.14"  # the one ./ops/test builds, when none is there
    built = tmp_path / "v1.37.2" / "kube-scheduler"
    built.parent.mkdir()
    built.write_bytes(b"")
    built.chmod(0o755)
    assert ks.binary("1.37.2") == (built, "")
    assert ks.default_version() == "1.37.2"


@pytest.mark.parametrize(
    ("kube", "draplane", "expected"),
    [
        (
            ks.Figures(25.0, 300.0),
            ks.Figures(100.0, 120.0),
            "= 0.25 (25.0 / 100.0 pods/s; create→bound p50 300 / 120 ms)",
        ),
        (ks.Figures(60.0, 90.0), ks.Figures(40.0, 130.0), "= 1.50 (60.0 / 40.0 pods/s; create→bound p50 90 / 130 ms)"),
        (ks.Figures(5.0, 1.0), ks.Figures(0.0, math.nan), "= n/a (5.0 / 0.0 pods/s; create→bound p50 1 / nan ms)"),
    ],
)
def test_the_comparison_line_gives_both_figures_and_kube_over_draplane(
    kube: ks.Figures, draplane: ks.Figures, expected: str
) -> None:
    line = ks.comparison("Steady", kube=kube, draplane=draplane, kube_label=ks.label("1.31.14"))
    assert line == (
        "Steady: kube-scheduler 1.31.14 (JSON, client qps 5000/burst 5000, no leader election) / draplane " + expected
    )


@pytest.mark.parametrize(
    ("argv", "scheduler", "emulated"),
    [
        ([], "draplane", "1.37"),
        (["--emulated-version", "1.31"], "draplane", "1.31"),
        (["--scheduler", "kube", "--kube-version", "1.31.14"], "kube", "1.31"),
        (["--scheduler", "both", "--kube-version", "1.37.2", "--emulated-version", "1.37"], "both", "1.37"),
    ],
)
def test_the_stack_release_follows_kube_scheduler(argv: list[str], scheduler: str, emulated: str) -> None:
    args = bench.parse_args(argv)
    assert (args.scheduler, args.emulated_version) == (scheduler, emulated)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--scheduler", "kube", "--kube-version", "1.31.14", "--emulated-version", "1.37"],
            "kube-scheduler 1.31.14 needs the stack at --emulated-version 1.31",
        ),
        (
            ["--scheduler", "both", "--kube-version", "1.37.2", "--workload", "selector"],
            "--scheduler both runs claim-template, steady-empty, steady-half, steady-full; not selector",
        ),
    ],
)
def test_what_kube_scheduler_cannot_run_is_refused(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        bench.parse_args(argv)
    assert message in capsys.readouterr().err
