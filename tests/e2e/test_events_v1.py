"""events.k8s.io/v1 Events: a second view of core Events, through the Python client and kubectl.

kube-scheduler and kube-controller-manager 1.31 write their Events through
events.k8s.io/v1 (client-go's new EventBroadcaster). In Kubernetes both groups
are one storage (the events.k8s.io REST storage is core's), so an Event
written through one group is read, listed and watched through the other with
the fields renamed (pkg/apis/events/v1/conversion.go). Here on both backends:
EventsV1Api creates an Event that ``kubectl get events`` (core) prints; a core
Event is read back through events.k8s.io/v1 with the mapped fields; list and
watch through events.k8s.io/v1 (with bookmarks, as informers ask); discovery
lists the group.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import watch

from tests.e2e.conftest import Stack

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def _api(stack: Stack) -> k8s.ApiClient:
    cfg = k8s.Configuration()
    cfg.host = stack.url
    cfg.ssl_ca_cert = str(stack.ca_cert)
    cfg.api_key = {"authorization": f"Bearer {stack.token}"}
    return k8s.ApiClient(cfg)


def events_flow(stack: Stack, ns: str) -> dict[str, Any]:
    api = _api(stack)
    core, events = k8s.CoreV1Api(api), k8s.EventsV1Api(api)
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=ns)))
    start = events.list_namespaced_event(ns).metadata.resource_version
    now = datetime.now(UTC)
    # What client-go's events.k8s.io/v1 recorder writes for a scheduled pod.
    created = events.create_namespaced_event(
        ns,
        k8s.EventsV1Event(
            metadata=k8s.V1ObjectMeta(name="web-0.scheduled"),
            event_time=now,
            reporting_controller="default-scheduler",
            reporting_instance="default-scheduler-node-1",
            action="Binding",
            reason="Scheduled",
            note=f"Successfully assigned {ns}/web-0 to node-1",
            type="Normal",
            regarding=k8s.V1ObjectReference(kind="Pod", namespace=ns, name="web-0", api_version="v1"),
        ),
    )
    as_core = core.read_namespaced_event("web-0.scheduled", ns)
    # A core Event with the deprecated fields set, read back through events.k8s.io/v1 (with an
    # eventTime: the Python client's EventsV1Event refuses one without, as against kube-apiserver).
    core.create_namespaced_event(
        ns,
        k8s.CoreV1Event(
            metadata=k8s.V1ObjectMeta(name="web-0.pulled"),
            event_time=now,
            reporting_component="kubelet",
            reporting_instance="node-1",
            action="Pulling",
            involved_object=k8s.V1ObjectReference(kind="Pod", namespace=ns, name="web-0"),
            reason="Pulled",
            message="Container image pulled",
            type="Normal",
            count=3,
            source=k8s.V1EventSource(component="kubelet", host="node-1"),
            first_timestamp=now,
            last_timestamp=now,
        ),
    )
    as_v1 = events.read_namespaced_event("web-0.pulled", ns)
    listed = events.list_namespaced_event(ns)
    selected = events.list_namespaced_event(ns, field_selector="reportingController=default-scheduler")
    seen: list[tuple[str, str, str]] = []
    w = watch.Watch()
    for event in w.stream(
        events.list_namespaced_event, ns, resource_version=start, allow_watch_bookmarks=True, timeout_seconds=10
    ):
        obj = event["object"]
        seen.append((event["type"], type(obj).__name__, obj.metadata.name or ""))
        if len([s for s in seen if s[0] == "ADDED"]) == 2:
            w.stop()
    events.delete_namespaced_event("web-0.scheduled", ns)
    remaining = [e.metadata.name for e in core.list_namespaced_event(ns).items]
    return {
        "created": created,
        "as_core": as_core,
        "as_v1": as_v1,
        "listed": listed,
        "selected": [e.metadata.name for e in selected.items],
        "seen": seen,
        "remaining": remaining,
    }


async def test_events_v1_and_core_events_are_one_storage(stack: Stack) -> None:
    ns = f"ev-{uuid.uuid4().hex[:8]}"
    result = await asyncio.to_thread(events_flow, stack, ns)
    created = result["created"]
    assert created.reporting_controller == "default-scheduler" and created.regarding.name == "web-0"
    # Written through events.k8s.io/v1, read through core/v1: the renamed fields.
    as_core = result["as_core"]
    assert as_core.involved_object.name == "web-0" and as_core.involved_object.kind == "Pod"
    assert as_core.message == f"Successfully assigned {ns}/web-0 to node-1"
    assert as_core.reporting_component == "default-scheduler"
    assert as_core.reporting_instance == "default-scheduler-node-1"
    assert (as_core.action, as_core.reason, as_core.type) == ("Binding", "Scheduled", "Normal")
    assert as_core.metadata.uid == created.metadata.uid
    # Written through core/v1, read through events.k8s.io/v1.
    as_v1 = result["as_v1"]
    assert as_v1.note == "Container image pulled" and as_v1.regarding.name == "web-0"
    assert (as_v1.reporting_controller, as_v1.reporting_instance, as_v1.action) == ("kubelet", "node-1", "Pulling")
    assert as_v1.deprecated_count == 3
    assert (as_v1.deprecated_source.component, as_v1.deprecated_source.host) == ("kubelet", "node-1")
    assert as_v1.deprecated_first_timestamp is not None and as_v1.deprecated_last_timestamp is not None
    listed = result["listed"]
    assert type(listed).__name__ == "EventsV1EventList"
    assert sorted(e.metadata.name for e in listed.items) == ["web-0.pulled", "web-0.scheduled"]
    assert result["selected"] == ["web-0.scheduled"]
    added = [s for s in result["seen"] if s[0] == "ADDED"]
    assert sorted(added) == [
        ("ADDED", "EventsV1Event", "web-0.pulled"),
        ("ADDED", "EventsV1Event", "web-0.scheduled"),
    ], result["seen"]
    # Deleted through events.k8s.io/v1: gone from core.
    assert result["remaining"] == ["web-0.pulled"]


async def test_kubectl_shows_events_written_through_events_v1(stack: Stack) -> None:
    ns = f"evk-{uuid.uuid4().hex[:8]}"
    await stack.kubectl("create", "namespace", ns)
    body = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "claim.allocated", "namespace": ns},
        "eventTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "reportingController": "resource-claim-controller",
        "reportingInstance": "kcm-1",
        "action": "Allocate",
        "reason": "Allocated",
        "note": "claim allocated on node-1",
        "type": "Normal",
        "regarding": {"kind": "ResourceClaim", "namespace": ns, "name": "gpu"},
    }
    await stack.kubectl("create", "-f", "-", stdin=json.dumps(body))
    core = await stack.kubectl("get", "events", "-n", ns)
    header, *rows = core.out.splitlines()
    # 1.31's columns for both groups (one printer, of the internal type).
    assert header.split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert rows and rows[0].split()[1:5] == ["Normal", "Allocated", "resourceclaim/gpu", "claim"], core.out
    via_group = await stack.kubectl("get", "events.events.k8s.io", "-n", ns, "--no-headers")
    assert via_group.out.split()[1:5] == ["Normal", "Allocated", "resourceclaim/gpu", "claim"]
    # Patched through events.k8s.io/v1 (strategic merge, kubectl's default; and server-side apply), read through core.
    await stack.kubectl(
        "patch", "events.events.k8s.io", "claim.allocated", "-n", ns, "-p", '{"metadata":{"labels":{"seen":"yes"}}}'
    )
    applied = {**body, "metadata": {**body["metadata"], "labels": {"seen": "yes", "by": "apply"}}}
    await stack.kubectl("apply", "--server-side", "--field-manager=t", "-f", "-", stdin=json.dumps(applied))
    got = json.loads(
        (await stack.kubectl("get", "event", "claim.allocated", "-n", ns, "-o", "json", "--show-managed-fields")).out
    )
    assert got["apiVersion"] == "v1" and got["metadata"]["labels"] == {"seen": "yes", "by": "apply"}
    assert got["involvedObject"]["name"] == "gpu" and got["reportingComponent"] == "resource-claim-controller"
    managers = {m["manager"]: m["apiVersion"] for m in got["metadata"]["managedFields"]}
    assert managers["t"] == "events.k8s.io/v1"
    # events.k8s.io/v1 keeps an Event's note; core/v1 updates are judged by the legacy rules only.
    changed = await stack.kubectl(
        "patch", "events.events.k8s.io", "claim.allocated", "-n", ns, "--type=merge", "-p", '{"note":"x"}', ok=False
    )
    assert changed.code != 0 and 'message: Invalid value: "x": field is immutable' in changed.err, changed
    await stack.kubectl("patch", "event", "claim.allocated", "-n", ns, "--type=merge", "-p", '{"message":"x"}')
    # Strict events.k8s.io/v1 validation, worded as Kubernetes' ValidateEventCreate.
    bad = {**body, "metadata": {"name": "bad", "namespace": ns}, "action": "", "type": "Odd"}
    refused = await stack.kubectl("create", "-f", "-", stdin=json.dumps(bad), ok=False)
    assert refused.code != 0
    assert "action: Required value" in refused.err and 'type: Invalid value: "": has invalid value: Odd' in refused.err
    resources = await stack.kubectl("api-resources", "--api-group=events.k8s.io", "--no-headers")
    assert resources.out.split() == ["events", "ev", "events.k8s.io/v1", "true", "Event"]
