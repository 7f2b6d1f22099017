"""Benchmark logs (ops/bench/fresh_logs.py): a fresh one per run, and what `drop` refuses or leaves."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ops.bench import fresh_logs
from services.bus.urls import KafkaTarget, SqliteTarget, parse_bus_url


def test_each_url_names_a_log_no_other_run_has(tmp_path: Path) -> None:
    kafka = {fresh_logs.fresh_url("kafka", kafka="127.0.0.1:9092", stem="lat") for _ in range(50)}
    assert len(kafka) == 50
    target = parse_bus_url(next(iter(kafka)))
    assert isinstance(target, KafkaTarget)
    assert target.bootstrap_servers == ("127.0.0.1:9092",)
    assert target.prefix.startswith("lat") and target.prefix.endswith("-") and len(target.prefix) == len("lat") + 9

    embedded = parse_bus_url(fresh_logs.fresh_url("embedded", workdir=tmp_path))
    assert isinstance(embedded, SqliteTarget)
    assert Path(embedded.path).parent == tmp_path


def test_a_url_it_cannot_make_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="--backend kafka needs"):
        fresh_logs.fresh_url("kafka", workdir=tmp_path)
    with pytest.raises(ValueError, match="'etcd'"):
        fresh_logs.fresh_url("etcd", workdir=tmp_path)
    with pytest.raises(ValueError, match="workdir"):
        fresh_logs.fresh_url("embedded")


def test_drop_refuses_kafka_topics_without_a_prefix_before_connecting() -> None:
    # nothing listens on port 1: a connection attempt would fail differently
    with pytest.raises(ValueError, match="no topic prefix"):
        asyncio.run(fresh_logs.drop("kafka://127.0.0.1:1"))


def test_drop_leaves_an_embedded_log_to_its_directory(tmp_path: Path) -> None:
    url = fresh_logs.fresh_url("embedded", workdir=tmp_path)
    target = parse_bus_url(url)
    assert isinstance(target, SqliteTarget)
    Path(target.path).write_bytes(b"kept")

    async def dropped() -> list[str]:
        async with fresh_logs.dropped_after(url) as same:
            assert same == url
        return await fresh_logs.drop(url)

    assert asyncio.run(dropped()) == []
    assert Path(target.path).read_bytes() == b"kept"


def test_a_failed_deletion_is_reported_and_leaves_the_runs_own_error(capsys: pytest.CaptureFixture[str]) -> None:
    url = "kafka://127.0.0.1:1?prefix=gone-"  # nothing listens there: the deletion fails

    async def run() -> None:
        async with fresh_logs.dropped_after(url):
            raise RuntimeError("the run's own failure")

    with pytest.raises(RuntimeError, match="the run's own failure"):
        asyncio.run(run())
    assert f"the run's topics at {url} were not deleted" in capsys.readouterr().err
