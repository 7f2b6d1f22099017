"""`draplane replay --api-version`: records shown in one version of their group, through the conversion entry points.

Pure cases on single objects (both stored forms: 1.31's v1alpha3 of a pre-hub
log, and the hub form), and the command run on a copy of the recorded
pre-hub log (``tests/integration/upgrade/recorded-log``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from services import cli
from services.api.machinery.conversion import to_internal
from services.replay.output import ReplayedRecord
from services.replay.versions import VersionView, known_api_versions, parse_api_version

RG = "resource.k8s.io"
RECORDED_LOG = Path(__file__).resolve().parents[2] / "integration" / "upgrade" / "recorded-log" / "bus.db"

CLAIM_V1ALPHA3: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1alpha3",
    "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "ns", "resourceVersion": "7"},
    "spec": {
        "controller": "gpu.example.com",
        "devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com", "count": 1}]},
    },
}
SLICE_V1ALPHA3: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1alpha3",
    "kind": "ResourceSlice",
    "metadata": {"name": "s"},
    "spec": {
        "driver": "gpu.example.com",
        "nodeName": "node-1",
        "pool": {"name": "node-1", "generation": 0, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0", "basic": {"capacity": {"memory": "80Gi"}}}],
    },
}
SLICE_HUB = to_internal(SLICE_V1ALPHA3, group=RG, kind="ResourceSlice", version="v1alpha3")
PSC: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1alpha3",
    "kind": "PodSchedulingContext",
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"selectedNode": "node-1"},
}
POD: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": {}}


def view(text: str) -> tuple[VersionView, list[str]]:
    notes: list[str] = []
    return VersionView.parse(text, note=notes.append), notes


def test_known_versions_are_the_served_and_convertible_ones_in_kube_order() -> None:
    known = known_api_versions()
    assert known[0] == "v1"
    resource = [v for v in known if v.startswith(RG + "/")]
    assert resource == [f"{RG}/v1", f"{RG}/v1beta2", f"{RG}/v1beta1", f"{RG}/v1alpha3"]


@pytest.mark.parametrize("text", ["resource.k8s.io/v2", "v2", "batch/v1", "resource.k8s.io", "", "__internal"])
def test_an_unknown_version_is_one_line_naming_the_known_ones(text: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_api_version(text)
    message = str(err.value)
    assert "\n" not in message
    assert message == f"unknown API version {text!r}: known are {', '.join(known_api_versions())}"


# (stored object, version asked, what the printed object must hold)
CASES: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    (
        "claim-v1",
        CLAIM_V1ALPHA3,
        "v1",
        {
            "apiVersion": "resource.k8s.io/v1",
            "spec": {
                "devices": {
                    "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": 1}}]
                }
            },
        },
    ),
    (
        "claim-v1beta1",
        CLAIM_V1ALPHA3,
        "v1beta1",
        {
            "apiVersion": "resource.k8s.io/v1beta1",
            "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com", "count": 1}]}},
        },
    ),
    (
        "claim-v1alpha3",
        CLAIM_V1ALPHA3,
        "v1alpha3",
        {"apiVersion": "resource.k8s.io/v1alpha3", "spec": CLAIM_V1ALPHA3["spec"]},
    ),
    (
        "pre-hub-slice-v1",
        SLICE_V1ALPHA3,
        "v1",
        {"spec": {**SLICE_V1ALPHA3["spec"], "devices": [{"name": "gpu-0", "capacity": {"memory": {"value": "80Gi"}}}]}},
    ),
    (
        "hub-slice-v1",
        SLICE_HUB,
        "v1",
        {"spec": {**SLICE_V1ALPHA3["spec"], "devices": [{"name": "gpu-0", "capacity": {"memory": {"value": "80Gi"}}}]}},
    ),
    ("hub-slice-v1alpha3", SLICE_HUB, "v1alpha3", {"spec": SLICE_V1ALPHA3["spec"]}),
]


@pytest.mark.parametrize(("stored", "version", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_stored_objects_print_in_the_version_asked_for(
    stored: dict[str, Any], version: str, want: dict[str, Any]
) -> None:
    v, notes = view(f"{RG}/{version}")
    out = v.convert(stored, group=RG)
    for key, value in want.items():
        assert out[key] == value, key
    assert out["metadata"] == stored["metadata"]  # resourceVersion and identity as stored
    assert notes == []


def test_other_groups_are_shown_as_stored() -> None:
    v, notes = view(f"{RG}/v1")
    assert v.convert(POD, group="core") is POD
    log_record = {"apiVersion": "draplane.io/v1", "kind": "Log", "metadata": {"name": "objects"}}
    assert v.convert(log_record, group="draplane.io") is log_record
    core, _ = view("v1")
    assert core.convert(POD, group="core") is POD
    assert core.convert(CLAIM_V1ALPHA3, group=RG) is CLAIM_V1ALPHA3
    assert notes == []


def test_a_kind_the_version_lacks_is_shown_as_stored_with_one_note() -> None:
    v, notes = view(f"{RG}/v1")
    assert v.convert(PSC, group=RG) is PSC
    assert v.convert({**PSC, "metadata": {"name": "q", "namespace": "ns"}}, group=RG)["apiVersion"] == PSC["apiVersion"]
    assert notes == [
        "note: resource.k8s.io/v1 has no PodSchedulingContext; PodSchedulingContext records are shown as stored "
        "(resource.k8s.io/v1alpha3)"
    ]


def test_records_convert_by_their_key_and_tombstones_pass() -> None:
    v, _ = view(f"{RG}/v1beta2")
    record = ReplayedRecord("objects", 0, 7, 0, "resource.k8s.io/resourceclaims/ns/c", "ADDED", CLAIM_V1ALPHA3)
    assert v.record(record).object["apiVersion"] == "resource.k8s.io/v1beta2"
    assert v.record(record).object["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1
    tombstone = ReplayedRecord("objects", 0, 8, 0, "resource.k8s.io/resourceclaims/ns/c", "TOMBSTONE", None)
    assert v.record(tombstone) is tombstone
    other_topic = ReplayedRecord("requests", 0, 1, 0, "k", "RECORD", {"kind": "ResourceClaim"})
    assert v.record(other_topic) is other_topic


def test_the_command_prints_the_recorded_log_in_v1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "bus.db"
    shutil.copyfile(RECORDED_LOG, log)
    assert cli.main(["replay", "--bus", f"sqlite:///{log}", "--api-version", f"{RG}/v1", "-o", "json"]) == 0
    out, err = capsys.readouterr()
    objects = [r["object"] for r in map(orjson.loads, out.splitlines()) if r["object"]]
    kinds = {(o["apiVersion"], o["kind"]) for o in objects if o["apiVersion"].startswith(RG)}
    assert kinds == {
        (f"{RG}/v1", "DeviceClass"),
        (f"{RG}/v1", "ResourceClaim"),
        (f"{RG}/v1", "ResourceClaimTemplate"),
        (f"{RG}/v1", "ResourceSlice"),
        (f"{RG}/v1alpha3", "PodSchedulingContext"),
    }
    assert {o["apiVersion"] for o in objects if o["kind"] == "Pod"} == {"v1"}
    claims = [o for o in objects if o["kind"] == "ResourceClaim"]
    assert all("exactly" in r for c in claims for r in c["spec"]["devices"]["requests"])
    assert err.splitlines() == [
        "note: resource.k8s.io/v1 has no PodSchedulingContext; PodSchedulingContext records are shown as stored "
        "(resource.k8s.io/v1alpha3)"
    ]


@pytest.mark.parametrize("argv", [["--api-version", "resource.k8s.io/v7"], ["get", "pods", "--api-version", "x/y"]])
def test_the_command_refuses_an_unknown_version_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    log = tmp_path / "bus.db"
    shutil.copyfile(RECORDED_LOG, log)
    assert cli.main(["replay", "--bus", f"sqlite:///{log}", *argv]) == 2
    _, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and err.startswith("error: unknown API version"), err
    assert "resource.k8s.io/v1, " in err


def test_the_command_refuses_api_version_with_the_scheduler(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["replay", "--bus", f"sqlite:///{tmp_path / 'bus.db'}", "--scheduler", "--api-version", "v1"]) == 2
    assert "--api-version does not go with --scheduler" in capsys.readouterr().err
