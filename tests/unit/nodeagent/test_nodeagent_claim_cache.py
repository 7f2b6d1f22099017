"""The node agent's claim cache survives a restart."""

from __future__ import annotations

from pathlib import Path

from services.nodeagent.claim_cache import ClaimCache, ClaimInfo


def test_round_trip_through_the_file(tmp_path: Path) -> None:
    path = tmp_path / "nodeagent" / "claims.json"
    cache = ClaimCache(path)
    info = ClaimInfo(
        "u1",
        "ns",
        "c1",
        ["gpu.example.com"],
        {"p1", "p2"},
        True,
        {"gpu.example.com": [{"deviceName": "gpu-0", "cdiDeviceIDs": ["k/gpu=x"]}]},
    )
    cache.put(info)
    cache.put(ClaimInfo("u2", "ns", "c2", []))
    cache.save()
    assert not list(path.parent.glob(".*.tmp"))
    loaded = ClaimCache(path)
    loaded.load()
    assert loaded.get("ns", "c1") == info
    assert len(loaded) == 2
    loaded.remove("ns", "c2")
    assert [i.name for i in loaded] == ["c1"]
    assert info.all_devices() == [{"deviceName": "gpu-0", "cdiDeviceIDs": ["k/gpu=x"]}]


def test_a_missing_or_broken_file_is_an_empty_cache(tmp_path: Path) -> None:
    cache = ClaimCache(tmp_path / "claims.json")
    cache.load()
    assert len(cache) == 0
    (tmp_path / "claims.json").write_text("{not json")
    cache.load()
    assert len(cache) == 0
