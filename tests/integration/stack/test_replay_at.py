"""`draplane replay --at OFFSET|TIME get`: the state at an earlier point differs from now exactly as the log says.

On both backends: a claim created, updated, then deleted, and a second claim
created after the update. At each point the rebuilt state must hold exactly
what had happened by then — an object created later is absent, a later
update not yet applied, a deleted object still present.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from services import cli
from services.replay.rebuild import Rebuilt, rebuild, timestamp_at
from services.testing.harness import LogHarness
from tests.conftest import BusUrl
from topics.declarations import OBJECTS

RG = "resource.k8s.io"
NS = "replay"
CLAIMS = {(RG, "resourceclaims")}


def claim(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}},
    }


def claims_at(rebuilt: Rebuilt) -> dict[str, tuple[str, str, str | None]]:
    """name -> (uid, resourceVersion, label v)."""
    return {
        o["metadata"]["name"]: (
            o["metadata"]["uid"],
            o["metadata"]["resourceVersion"],
            (o["metadata"].get("labels") or {}).get("v"),
        )
        for o in rebuilt.state.list(RG, "resourceclaims", NS)
    }


async def clock_past(ms: int) -> None:
    """Let the wall clock pass ``ms``: record times are the clock's, and no event says it moved on."""
    await asyncio.sleep(max(0.0, (ms + 2 - time.time() * 1000) / 1000))
    assert time.time() * 1000 > ms


async def test_state_at_earlier_points_differs_from_now_as_the_log_says(bus_url: BusUrl) -> None:
    url = bus_url()
    async with LogHarness.running(url) as log:
        admin = await log.client()
        await admin.create("", "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        early = await admin.create(RG, "resourceclaims", claim("early"))
        uid = early["metadata"]["uid"]
        created = int(early["metadata"]["resourceVersion"])
        updated_obj = await admin.patch(RG, "resourceclaims", NS, "early", {"metadata": {"labels": {"v": "2"}}})
        updated = int(updated_obj["metadata"]["resourceVersion"])
        update_ms = await timestamp_at(log.bus, OBJECTS, updated)
        assert update_ms is not None
        await clock_past(update_ms)
        late = await admin.create(RG, "resourceclaims", claim("late"))
        late_rv = int(late["metadata"]["resourceVersion"])
        deleted = await admin.delete(RG, "resourceclaims", NS, "early")
        assert deleted["metadata"]["uid"] == uid
        late_uid = late["metadata"]["uid"]

        before = await rebuild(log.bus, at=("offset", created - 1), kinds=CLAIMS)
        at_create = await rebuild(log.bus, at=("offset", created), kinds=CLAIMS)
        at_update = await rebuild(log.bus, at=("offset", updated), kinds=CLAIMS)
        at_late = await rebuild(log.bus, at=("offset", late_rv), kinds=CLAIMS)
        at_time = await rebuild(log.bus, at=("time", update_ms), kinds=CLAIMS)
        now = await rebuild(log.bus, kinds=CLAIMS)

        # Nothing yet; then created (no label), updated, joined by the later claim, and finally deleted.
        assert claims_at(before) == {}
        assert claims_at(at_create) == {"early": (uid, str(created), None)}
        assert claims_at(at_update) == {"early": (uid, str(updated), "2")}
        assert claims_at(at_late) == {"early": (uid, str(updated), "2"), "late": (late_uid, str(late_rv), None)}
        assert claims_at(at_time) == claims_at(at_update)  # a time point: every record appended until then
        assert claims_at(now) == {"late": (late_uid, str(late_rv), None)}
        # What a list at that point reports as its resourceVersion.
        assert at_update.resource_version == str(updated)
        assert not at_update.past_end and not at_update.inexact
        past = await rebuild(log.bus, at=("offset", now.log_end + 10), kinds=CLAIMS)
        assert past.past_end and claims_at(past) == claims_at(now)


@pytest.fixture
def recorded(bus_url: BusUrl) -> dict[str, Any]:
    """A log with one claim created, updated and deleted; returns its URL and the offsets."""

    async def write() -> dict[str, Any]:
        url = bus_url()
        async with LogHarness.running(url) as log:
            admin = await log.client()
            await admin.create("", "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
            created = await admin.create(RG, "resourceclaims", claim("gpu"))
            updated = await admin.patch(RG, "resourceclaims", NS, "gpu", {"metadata": {"labels": {"v": "2"}}})
            await admin.delete(RG, "resourceclaims", NS, "gpu")
            return {
                "url": url,
                "uid": created["metadata"]["uid"],
                "created": created["metadata"]["resourceVersion"],
                "updated": updated["metadata"]["resourceVersion"],
            }

    return asyncio.run(write())


def test_replay_get_command_prints_the_state_at_a_point(
    recorded: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    url = recorded["url"]

    def run(*args: str) -> tuple[int, str, str]:
        code = cli.main(["replay", "--bus", url, *args])
        out, err = capsys.readouterr()
        return code, out, err

    code, out, _ = run("--at", recorded["created"], "get", "resourceclaims", "-n", NS)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "STATE", "AGE"]
    assert lines[1].split()[:2] == ["gpu", "pending"]
    assert len(lines) == 2

    code, out, _ = run("--at", recorded["created"], "get", "resourceclaim", "gpu", "-n", NS, "-o", "json")
    doc = json.loads(out)
    assert code == 0
    assert doc["metadata"]["uid"] == recorded["uid"]
    assert doc["metadata"]["resourceVersion"] == recorded["created"]
    assert "labels" not in doc["metadata"]  # the update came later
    assert "managedFields" not in doc["metadata"]

    code, out, _ = run("--at", recorded["updated"], "get", "resourceclaims", "-n", NS, "-o", "json")
    doc = json.loads(out)
    assert doc["kind"] == "List" and doc["metadata"]["resourceVersion"] == recorded["updated"]
    assert [i["metadata"]["labels"] for i in doc["items"]] == [{"v": "2"}]

    # Now it is gone: kubectl's messages, and its exit code for a missing name.
    code, out, err = run("get", "resourceclaims", "-n", NS)
    assert (code, out, err.strip()) == (0, "", f"No resources found in {NS} namespace.")
    code, out, err = run("get", "resourceclaims", "gpu", "-n", NS)
    assert code == 1 and out == ""
    assert err.strip() == 'Error from server (NotFound): resourceclaims.resource.k8s.io "gpu" not found'

    code, out, _ = run("--at", recorded["created"], "get", "namespaces", "-o", "name")
    assert code == 0 and f"namespace/{NS}" in out.splitlines()

    code, _, err = run("--at", "3", "get", "nosuchthing")
    assert code == 2 and 'the server doesn\'t have a resource type "nosuchthing"' in err
    code, _, err = run("--at", "3")
    assert code == 2 and "--at needs get" in err
