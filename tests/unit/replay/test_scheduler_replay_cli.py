"""replay --scheduler's command line, its what-if overrides and its write client that writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from services import cli
from services.api.machinery.status import StatusError
from services.cmd.replay import load_objects
from services.replay.no_write_client import NoWriteClient, Write
from services.replay.overrides import OverrideError, apply_override, override_key, rewrite_with
from services.scheduler.client import RESOURCE_CLAIMS

RG = "resource.k8s.io"


def device_class(expression: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com", "labels": {"tier": "override"}},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


RECORDED = {
    "apiVersion": "resource.k8s.io/v1alpha3",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com", "uid": "u-1", "resourceVersion": "12", "labels": {"tier": "recorded"}},
    "spec": {"selectors": [{"cel": {"expression": "true"}}]},
}


def test_an_override_replaces_content_and_keeps_the_recorded_identity() -> None:
    out = apply_override(RECORDED, device_class("false"))
    assert out["spec"] == {"selectors": [{"cel": {"expression": "false"}}]}
    assert out["metadata"] == {
        "name": "gpu.example.com",
        "uid": "u-1",
        "resourceVersion": "12",
        "labels": {"tier": "override"},
    }
    assert RECORDED["spec"] == {"selectors": [{"cel": {"expression": "true"}}]}  # the recorded object is untouched


def test_a_rewrite_touches_only_the_overridden_objects() -> None:
    rewrite = rewrite_with([device_class("false")])
    assert rewrite(RG, "deviceclasses", RECORDED)["spec"]["selectors"][0]["cel"]["expression"] == "false"
    other = {**RECORDED, "metadata": {**RECORDED["metadata"], "name": "other"}}
    assert rewrite(RG, "deviceclasses", other) is other


def test_override_keys_default_the_namespace_and_refuse_what_draplane_does_not_serve() -> None:
    claim = {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceClaim", "metadata": {"name": "c"}}
    assert override_key(claim) == (RG, "resourceclaims", "default", "c")
    assert override_key({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}) == ("", "nodes", "", "n")
    with pytest.raises(OverrideError, match='no resource for apiVersion "v9", kind "Widget"'):
        override_key({"apiVersion": "v9", "kind": "Widget", "metadata": {"name": "w"}})
    with pytest.raises(OverrideError, match=r"Node override without metadata\.name"):
        override_key({"apiVersion": "v1", "kind": "Node", "metadata": {}})


def test_override_files_hold_documents_and_lists(tmp_path: Path) -> None:
    first = tmp_path / "classes.yaml"
    first.write_text(yaml.safe_dump_all([device_class("a"), None, device_class("b")]))
    second = tmp_path / "list.json"
    second.write_text('{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node"}]}')
    loaded = load_objects([str(first), str(second)])
    assert [o["kind"] for o in loaded] == ["DeviceClass", "DeviceClass", "Node"]


async def test_the_write_client_answers_writes_without_writing_and_reads_the_replayed_state() -> None:
    state = {(RESOURCE_CLAIMS, "default", "c"): {"metadata": {"name": "c", "namespace": "default"}}}
    client = NoWriteClient(lambda resource, namespace, name: state.get((resource, namespace, name)))
    claim = {"metadata": {"name": "c", "namespace": "default"}, "status": {"reservedFor": []}}

    assert await client.update_status(RESOURCE_CLAIMS, claim) == claim
    assert await client.get(RESOURCE_CLAIMS, "c", namespace="default") == state[(RESOURCE_CLAIMS, "default", "c")]
    await client.delete(("resource.k8s.io", "podschedulingcontexts"), "p", namespace="default")
    with pytest.raises(StatusError) as err:
        await client.get(RESOURCE_CLAIMS, "missing", namespace="default")
    assert err.value.code == 404
    assert client.writes == [
        Write("update", RESOURCE_CLAIMS, "default", "c", "status"),
        Write("delete", ("resource.k8s.io", "podschedulingcontexts"), "default", "p"),
    ]
    assert state[(RESOURCE_CLAIMS, "default", "c")] == {"metadata": {"name": "c", "namespace": "default"}}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--scheduler", "get", "pods"], "--scheduler does not go with get"),
        (["--scheduler", "--follow"], "--follow does not go with --scheduler"),
        (["--scheduler", "--kind", "pods"], "--kind does not go with --scheduler"),
        (["--scheduler", "--topic", "events"], "--topic does not go with --scheduler"),
        (["--scheduler", "-o", "yaml"], "--scheduler prints text or json"),
        (["--scheduler", "--from", "yesterday"], "invalid time 'yesterday'"),
        (["--scheduler", "--feature-gates", "DRAAdminAccess=maybe"], 'for "--feature-gates" flag'),
        (["--scheduler", "--emulated-version", "1.33"], 'for "--emulated-version" flag: emulation version 1.33'),
        (["--scheduler", "--feature-gates", "DRAAdminAccess=false"], "feature is locked to true"),
        (["--emulated-version", "1.31"], "--emulated-version goes with --scheduler"),
        (["--scheduler", "--override", "/nonexistent/class.yaml"], "No such file or directory"),
        (["-o", "text"], "-o text goes with --scheduler"),
        (["--feature-gates", "DRAAdminAccess=true"], "--feature-gates goes with --scheduler"),
        (["--override", "x.yaml"], "--override goes with --scheduler"),
        (["--from", "3", "get", "pods"], "--from"),
    ],
)
def test_usage_errors_exit_2_before_touching_the_log(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert cli.main(["replay", "--bus", f"sqlite://{tmp_path / 'absent' / 'bus.db'}", *argv]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "absent").exists()
