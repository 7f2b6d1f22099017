"""Pod rules: DRA claims, containers and resources, scheduling fields, updates, status, binding."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.api.admission.validation import (
    validate_create,
    validate_pod_binding,
    validate_status_update,
    validate_update,
)

from .objects import BAD_NAME, LABEL_MSG, LABEL_VALUE_MSG, NAME_PART_MSG, POD, SUBDOMAIN_MSG, Obj, mutated, pod, render

Change = Callable[[Obj], Any]
C0 = "spec.containers[0]"
QUANTITY = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def spec(**values: Any) -> Change:
    return lambda o: o["spec"].update(values)


def container(**values: Any) -> Change:
    return lambda o: o["spec"]["containers"][0].update(values)


def claims(pod_claims: list[Obj], container_claims: list[Obj]) -> Change:
    def change(o: Obj) -> None:
        o["spec"]["resourceClaims"] = pod_claims
        o["spec"]["containers"][0]["resources"]["claims"] = container_claims

    return change


def resources(**values: Any) -> Change:
    return lambda o: o["spec"]["containers"][0].update(resources=values)


GPU = {"name": "gpu", "resourceClaimTemplateName": "gpu-template"}
SHARED = {"name": "shared", "resourceClaimName": "shared-claim"}
CLAIMS0 = f"{C0}.resources.claims"

CREATE_CASES: list[tuple[str, Change, list[str]]] = [
    ("valid", lambda o: None, []),
    (
        "minimal (not yet defaulted)",
        lambda o: o.update(
            metadata={"name": "p", "namespace": "default"}, spec={"containers": [{"name": "c", "image": "busybox"}]}
        ),
        [],
    ),
    # --- spec.resourceClaims
    ("claim without name", claims([{"resourceClaimName": "c"}], []), ["spec.resourceClaims[0].name: Required value"]),
    (
        "duplicate claim names",
        claims([GPU, {**SHARED, "name": "gpu"}], []),
        ['spec.resourceClaims[1].name: Duplicate value: "gpu"'],
    ),
    (
        "claim name not a label",
        claims([{**GPU, "name": "Gpu"}], []),
        [f'spec.resourceClaims[0].name: Invalid value: "Gpu": {LABEL_MSG}'],
    ),
    (
        "claim and template",
        claims([{"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}], []),
        [
            "spec.resourceClaims[0]: Invalid value: "
            '{"name":"gpu","resourceClaimName":"a","resourceClaimTemplateName":"b"}: '
            "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
        ],
    ),
    (
        "neither claim nor template",
        claims([{"name": "gpu"}], []),
        [
            'spec.resourceClaims[0]: Invalid value: {"name":"gpu"}: must specify one of: `resourceClaimName`, '
            "`resourceClaimTemplateName`"
        ],
    ),
    (
        "bad claim name",
        claims([{"name": "gpu", "resourceClaimName": BAD_NAME}], []),
        [f'spec.resourceClaims[0].resourceClaimName: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
    (
        "bad template name",
        claims([{"name": "gpu", "resourceClaimTemplateName": BAD_NAME}], []),
        [f'spec.resourceClaims[0].resourceClaimTemplateName: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
    # --- containers[*].resources.claims
    ("container claim without name", claims([GPU], [{}]), [f"{CLAIMS0}[0]: Required value"]),
    (
        "unknown container claim",
        claims([GPU, SHARED], [{"name": "nic"}]),
        [f'{CLAIMS0}[0]: Not found: "nic": must be one of the names in pod.spec.resourceClaims: gpu, shared'],
    ),
    (
        "container claim without pod claims",
        claims([], [{"name": "gpu"}]),
        [f'{CLAIMS0}[0]: Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is empty'],
    ),
    (
        "claim referenced twice",
        claims([GPU], [{"name": "gpu"}, {"name": "gpu"}]),
        [f'{CLAIMS0}[1]: Duplicate value: "gpu"'],
    ),
    (
        "request referenced twice",
        claims([SHARED], [{"name": "shared", "request": "a"}, {"name": "shared", "request": "a"}]),
        [f'{CLAIMS0}[1]: Duplicate value: "shared/a"'],
    ),
    (
        "claim after one of its requests",
        claims([SHARED], [{"name": "shared", "request": "a"}, {"name": "shared"}]),
        [f'{CLAIMS0}[1]: Duplicate value: "shared"'],
    ),
    (
        "request after its whole claim",
        claims([SHARED], [{"name": "shared"}, {"name": "shared", "request": "a"}]),
        [f'{CLAIMS0}[1]: Duplicate value: "shared"'],
    ),
    (
        "different requests of a claim",
        claims([SHARED], [{"name": "shared", "request": "a"}, {"name": "shared", "request": "b"}]),
        [],
    ),
    (
        "bad request name",
        claims([GPU], [{"name": "gpu", "request": "A"}]),
        [f'{CLAIMS0}[0].request: Invalid value: "A": {LABEL_MSG}'],
    ),
    (
        "init container claims",
        lambda o: o["spec"]["initContainers"][0].update(resources={"claims": [{"name": "nic"}]}),
        [
            'spec.initContainers[0].resources.claims[0]: Not found: "nic": must be one of the names in '
            "pod.spec.resourceClaims: gpu, shared"
        ],
    ),
    # --- containers
    ("no containers", spec(containers=[]), ["spec.containers: Required value"]),
    ("container without name", lambda o: o["spec"]["containers"][0].pop("name"), [f"{C0}.name: Required value"]),
    ("bad container name", container(name="Main"), [f'{C0}.name: Invalid value: "Main": {LABEL_MSG}']),
    (
        "duplicate container names",
        lambda o: o["spec"]["containers"].append({"name": "main", "image": "x"}),
        ['spec.containers[1].name: Duplicate value: "main"'],
    ),
    (
        "init container named like a container",
        lambda o: o["spec"]["initContainers"][0].update(name="main"),
        ['spec.initContainers[0].name: Duplicate value: "main"'],
    ),
    ("missing image", container(image=""), [f"{C0}.image: Required value"]),
    (
        "image with whitespace",
        container(image=" busybox"),
        [f'{C0}.image: Invalid value: " busybox": must not have leading or trailing whitespace'],
    ),
    (
        "bad termination message policy",
        container(terminationMessagePolicy="Always"),
        [
            f'{C0}.terminationMessagePolicy: Unsupported value: "Always": supported values: "File", '
            '"FallbackToLogsOnError"'
        ],
    ),
    (
        "bad pull policy",
        container(imagePullPolicy="Sometimes"),
        [f'{C0}.imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"'],
    ),
    (
        "restartPolicy on a regular container",
        container(restartPolicy="Always"),
        [f"{C0}.restartPolicy: Forbidden: may not be set for non-init containers"],
    ),
    (
        "sidecar with probe",
        lambda o: o["spec"]["initContainers"][0].update(
            restartPolicy="Always", readinessProbe={"exec": {"command": ["true"]}}
        ),
        [],
    ),
    (
        "init container restartPolicy",
        lambda o: o["spec"]["initContainers"][0].update(restartPolicy="OnFailure"),
        ['spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'],
    ),
    (
        "init container probe",
        lambda o: o["spec"]["initContainers"][0].update(livenessProbe={"exec": {"command": ["true"]}}),
        [
            "spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without "
            "restartPolicy=Always"
        ],
    ),
    # --- resources
    (
        "request above limit",
        resources(requests={"cpu": "2"}, limits={"cpu": "1"}),
        [f'{C0}.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'],
    ),
    (
        "negative limit",
        resources(limits={"memory": "-1Gi"}),
        [f'{C0}.resources.limits[memory]: Invalid value: "-1Gi": must be greater than or equal to 0'],
    ),
    (
        "unknown resource",
        resources(requests={"gpus": "1"}),
        [
            f'{C0}.resources.requests[gpus]: Invalid value: "gpus": must be a standard resource type or fully '
            "qualified",
            f'{C0}.resources.requests[gpus]: Invalid value: "gpus": must be a standard resource for containers',
        ],
    ),
    (
        "bad resource name",
        resources(limits={"example.com/": "1"}),
        [
            f'{C0}.resources.limits[example.com/]: Invalid value: "example.com/": name part must be non-empty',
            f'{C0}.resources.limits[example.com/]: Invalid value: "example.com/": {NAME_PART_MSG}',
            f'{C0}.resources.limits[example.com/]: Invalid value: "example.com/": doesn\'t follow extended resource '
            "name standard",
        ],
    ),
    ("extended resource", resources(requests={"example.com/fpga": "2"}, limits={"example.com/fpga": "2"}), []),
    (
        "fractional extended resource",
        resources(limits={"example.com/fpga": "500m"}),
        [f'{C0}.resources.limits[example.com/fpga]: Invalid value: "500m": must be an integer'],
    ),
    (
        "extended request differs from limit",
        resources(requests={"example.com/fpga": "1"}, limits={"example.com/fpga": "2"}),
        [f'{C0}.resources.requests: Invalid value: "1": must be equal to example.com/fpga limit of 2'],
    ),
    (
        "extended request without limit",
        resources(requests={"example.com/fpga": "1"}),
        [f"{C0}.resources.limits: Required value: Limit must be set for non overcommitable resources"],
    ),
    (
        "huge pages without cpu or memory",
        resources(limits={"hugepages-2Mi": "4Mi"}),
        [f"{C0}.resources: Forbidden: HugePages require cpu or memory"],
    ),
    (
        "huge pages not a multiple",
        resources(limits={"hugepages-2Mi": "3Mi", "memory": "1Gi"}),
        [
            f'{C0}.resources.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of '
            "hugepages-2Mi"
        ],
    ),
    (
        "quantity that does not parse",
        resources(limits={"cpu": "lots"}),
        [f'{C0}.resources.limits[cpu]: Invalid value: "lots": {QUANTITY}'],
    ),
    # --- pod-level fields
    (
        "bad restart policy",
        spec(restartPolicy="Sometimes"),
        ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
    ),
    (
        "bad dns policy",
        spec(dnsPolicy="Custom"),
        [
            'spec.dnsPolicy: Unsupported value: "Custom": supported values: "ClusterFirstWithHostNet", '
            '"ClusterFirst", "Default", "None"'
        ],
    ),
    (
        "bad node selector",
        spec(nodeSelector={"disk": "fast ssd"}),
        [f'spec.nodeSelector: Invalid value: "fast ssd": {LABEL_VALUE_MSG}'],
    ),
    ("bad node name", spec(nodeName=BAD_NAME), [f'spec.nodeName: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}']),
    (
        "bad service account",
        spec(serviceAccountName="SA"),
        [f'spec.serviceAccountName: Invalid value: "SA": {SUBDOMAIN_MSG}'],
    ),
    (
        "bad priority class",
        spec(priorityClassName="High"),
        [f'spec.priorityClassName: Invalid value: "High": {SUBDOMAIN_MSG}'],
    ),
    (
        "bad runtime class",
        spec(runtimeClassName="Kata"),
        [f'spec.runtimeClassName: Invalid value: "Kata": {SUBDOMAIN_MSG}'],
    ),
    (
        "bad preemption policy",
        spec(preemptionPolicy="Always"),
        ['spec.preemptionPolicy: Unsupported value: "Always": supported values: "PreemptLowerPriority", "Never"'],
    ),
    (
        "zero active deadline",
        spec(activeDeadlineSeconds=0),
        ["spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"],
    ),
    ("bad hostname", spec(hostname="a.b"), ['spec.hostname: Invalid value: "a.b": must not contain dots']),
    ("bad subdomain", spec(subdomain="Sub"), [f'spec.subdomain: Invalid value: "Sub": {LABEL_MSG}']),
    (
        "bad readiness gate",
        spec(readinessGates=[{"conditionType": "-x"}]),
        [f'spec.readinessGates[0].conditionType: Invalid value: "-x": {NAME_PART_MSG}'],
    ),
    (
        "scheduling gates",
        spec(schedulingGates=[{"name": "example.com/wait"}, {"name": "example.com/wait"}, {"name": "-x"}]),
        [
            'spec.schedulingGates[1]: Duplicate value: "example.com/wait"',
            f'spec.schedulingGates[2]: Invalid value: "-x": {NAME_PART_MSG}',
        ],
    ),
    (
        "node name with scheduling gates",
        spec(nodeName="worker-1", schedulingGates=[{"name": "example.com/wait"}]),
        ["spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"],
    ),
    (
        "ephemeral containers on create",
        spec(ephemeralContainers=[{"name": "debug", "image": "busybox"}]),
        ["spec.ephemeralContainers: Forbidden: cannot be set on create"],
    ),
    (
        "node affinity",
        spec(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []},
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}],
                }
            }
        ),
        [
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: "
            "Required value: must have at least one node selector term",
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: "
            "must be in the range 1-100",
        ],
    ),
    (
        "tolerations",
        spec(
            tolerations=[
                {"operator": "Equal", "value": "x"},
                {"key": "k", "operator": "Exists", "value": "v"},
                {"key": "k", "operator": "Maybe"},
                {"key": "k", "value": "bad value", "effect": "NoSchedule", "tolerationSeconds": 5},
                {"key": "k", "effect": "Sometimes"},
                {"operator": "Exists"},
            ]
        ),
        [
            'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, '
            'which means "match all values and all keys"',
            'spec.tolerations[1].operator: Invalid value: {"key":"k","operator":"Exists","value":"v"}: '
            "value must be empty when `operator` is 'Exists'",
            'spec.tolerations[2].operator: Unsupported value: "Maybe": supported values: "Equal", "Exists"',
            "spec.tolerations[3].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
            "`tolerationSeconds` is set",
            f'spec.tolerations[3].operator: Invalid value: "bad value": {LABEL_VALUE_MSG}',
            'spec.tolerations[4].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
            '"PreferNoSchedule", "NoExecute"',
        ],
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in CREATE_CASES], ids=[c[0] for c in CREATE_CASES])
def test_create(change: Change, expected: list[str]) -> None:
    assert render(validate_create(POD, mutated(pod(), change))) == expected


# --- update ---------------------------------------------------------------------------

FORBIDDEN_SPEC = (
    "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
    "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"
)
GATE = [{"name": "example.com/wait"}]
AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
        }
    }
}


def _terms(o: Obj) -> list[Obj]:
    return o["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]


UPDATE_CASES: list[tuple[str, Change, Change, list[str]]] = [
    ("no change", lambda o: None, lambda o: None, []),
    ("new image", lambda o: None, container(image="registry.example.com/trainer:1.1"), []),
    ("new init image", lambda o: None, lambda o: o["spec"]["initContainers"][0].update(image="busybox:1.37"), []),
    (
        "claims are immutable",
        lambda o: None,
        lambda o: o["spec"]["resourceClaims"][1].update(resourceClaimName="other"),
        [
            FORBIDDEN_SPEC + '- \tspec.resourceClaims[1].resourceClaimName: "shared-claim"\n'
            '+ \tspec.resourceClaims[1].resourceClaimName: "other"'
        ],
    ),
    (
        "claims cannot be added",
        lambda o: None,
        lambda o: o["spec"]["resourceClaims"].append({"name": "nic", "resourceClaimName": "n"}),
        [
            FORBIDDEN_SPEC + '- \tspec.resourceClaims: [{"name":"gpu","resourceClaimTemplateName":"gpu-template"},'
            '{"name":"shared","resourceClaimName":"shared-claim"}]\n'
            '+ \tspec.resourceClaims: [{"name":"gpu","resourceClaimTemplateName":"gpu-template"},'
            '{"name":"shared","resourceClaimName":"shared-claim"},{"name":"nic","resourceClaimName":"n"}]'
        ],
    ),
    (
        "container resources are immutable",
        lambda o: None,
        lambda o: o["spec"]["containers"][0]["resources"]["limits"].update(cpu="2"),
        [
            FORBIDDEN_SPEC
            + '- \tspec.containers[0].resources.limits.cpu: "1"\n+ \tspec.containers[0].resources.limits.cpu: "2"'
        ],
    ),
    (
        "add container",
        lambda o: None,
        lambda o: o["spec"]["containers"].append({"name": "second", "image": "x"}),
        ["spec.containers: Forbidden: pod updates may not add or remove containers"],
    ),
    ("drop image", lambda o: None, container(image=""), [f"{C0}.image: Required value"]),
    ("set active deadline", lambda o: None, spec(activeDeadlineSeconds=10), []),
    ("lower active deadline", spec(activeDeadlineSeconds=10), spec(activeDeadlineSeconds=5), []),
    (
        "raise active deadline",
        spec(activeDeadlineSeconds=5),
        spec(activeDeadlineSeconds=10),
        ["spec.activeDeadlineSeconds: Invalid value: 10: must be less than or equal to previous value"],
    ),
    (
        "clear active deadline",
        spec(activeDeadlineSeconds=5),
        lambda o: o["spec"].pop("activeDeadlineSeconds"),
        ["spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"],
    ),
    (
        "add toleration",
        lambda o: None,
        lambda o: o["spec"]["tolerations"].append({"key": "k", "operator": "Exists"}),
        [],
    ),
    (
        "change tolerationSeconds",
        lambda o: None,
        lambda o: o["spec"]["tolerations"][0].update(tolerationSeconds=60),
        [],
    ),
    (
        "modify toleration",
        lambda o: None,
        lambda o: o["spec"]["tolerations"][0].update(effect="NoSchedule", tolerationSeconds=None),
        ["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"],
    ),
    ("remove scheduling gate", spec(schedulingGates=GATE), spec(schedulingGates=[]), []),
    (
        "add scheduling gate",
        spec(schedulingGates=GATE),
        spec(schedulingGates=[*GATE, {"name": "example.com/b"}]),
        [
            "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate "
            "'example.com/b'"
        ],
    ),
    (
        "gated pod gains node selector entry",
        spec(schedulingGates=GATE),
        lambda o: o["spec"]["nodeSelector"].update(zone="a"),
        [],
    ),
    (
        "gated pod changes node selector entry",
        spec(schedulingGates=GATE),
        lambda o: o["spec"]["nodeSelector"].update({"kubernetes.io/os": "windows"}),
        [
            'spec.nodeSelector: Invalid value: {"kubernetes.io/os":"windows"}: '
            "only additions to spec.nodeSelector are allowed (no mutations or deletions)"
        ],
    ),
    (
        "gated pod gains node affinity",
        spec(schedulingGates=GATE),
        spec(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                        ]
                    }
                }
            }
        ),
        [],
    ),
    (
        "gated pod adds a node affinity requirement",
        lambda o: spec(schedulingGates=GATE, affinity=AFFINITY)(o),
        lambda o: _terms(o)[0]["matchExpressions"].append({"key": "rack", "operator": "Exists"}),
        [],
    ),
    (
        "gated pod adds a node selector term",
        lambda o: spec(schedulingGates=GATE, affinity=AFFINITY)(o),
        lambda o: _terms(o).append({"matchExpressions": [{"key": "rack", "operator": "Exists"}]}),
        [
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Invalid "
            "value: "
            '[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]},'
            '{"matchExpressions":[{"key":"rack","operator":"Exists"}]}]: '
            "no additions/deletions to non-empty NodeSelectorTerms list are allowed"
        ],
    ),
    (
        "gated pod changes a node affinity requirement",
        lambda o: spec(schedulingGates=GATE, affinity=AFFINITY)(o),
        lambda o: _terms(o)[0]["matchExpressions"][0].update(values=["b"]),
        [
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]: Invalid "
            "value: "
            '{"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]}: '
            "only additions are allowed (no mutations or deletions)"
        ],
    ),
    (
        "ungated pod changes node selector",
        lambda o: None,
        lambda o: o["spec"]["nodeSelector"].update(zone="a"),
        [FORBIDDEN_SPEC + '+ \tspec.nodeSelector.zone: "a"'],
    ),
    (
        "grace period from negative to 1",
        spec(terminationGracePeriodSeconds=-1),
        spec(terminationGracePeriodSeconds=1),
        [],
    ),
]


@pytest.mark.parametrize(
    ("old_change", "new_change", "expected"), [c[1:] for c in UPDATE_CASES], ids=[c[0] for c in UPDATE_CASES]
)
def test_update(old_change: Change, new_change: Change, expected: list[str]) -> None:
    old = mutated(pod(), old_change)
    assert render(validate_update(POD, mutated(old, new_change), old)) == expected


# --- status ---------------------------------------------------------------------------


def pod_status(**values: Any) -> Change:
    return lambda o: o["status"].update(values)


TERMINATED = [{"name": "main", "state": {"terminated": {"exitCode": 0}}}]
RUNNING = [{"name": "main", "state": {"running": {}}}]

STATUS_CASES: list[tuple[str, Change, Change, list[str]]] = [
    ("no change", lambda o: None, lambda o: None, []),
    (
        "claim statuses",
        lambda o: None,
        pod_status(
            resourceClaimStatuses=[{"name": "gpu", "resourceClaimName": "trainer-0-gpu-x7k2p"}, {"name": "shared"}]
        ),
        [],
    ),
    (
        "unknown claim status",
        lambda o: None,
        pod_status(resourceClaimStatuses=[{"name": "nic"}]),
        [
            'status.resourceClaimStatuses[0].name: Invalid value: "nic": must match the name of an entry in '
            "`spec.resourceClaims`"
        ],
    ),
    (
        "duplicate claim status",
        lambda o: None,
        pod_status(resourceClaimStatuses=[{"name": "gpu"}, {"name": "gpu"}]),
        ['status.resourceClaimStatuses[1].name: Duplicate value: "gpu"'],
    ),
    (
        "bad generated claim name",
        lambda o: None,
        pod_status(resourceClaimStatuses=[{"name": "gpu", "resourceClaimName": BAD_NAME}]),
        [f'status.resourceClaimStatuses[0].name: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
    (
        "conditions",
        lambda o: None,
        pod_status(
            conditions=[
                {"type": "Ready", "status": "True"},
                {"type": "example.com/Custom", "status": "True"},
                {"type": "bad type"},
            ]
        ),
        [f'metadata.conditions[2].Type: Invalid value: "bad type": {NAME_PART_MSG}'],
    ),
    (
        "node name changed",
        lambda o: None,
        spec(nodeName="worker-9"),
        ["status.nodeName: Forbidden: may not be changed directly"],
    ),
    (
        "bad nominated node",
        lambda o: None,
        pod_status(nominatedNodeName=BAD_NAME),
        [f'status.nominatedNodeName: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
    (
        "terminated container restarts",
        pod_status(containerStatuses=TERMINATED),
        pod_status(containerStatuses=RUNNING),
        ["status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state"],
    ),
    (
        "failed container restarts under OnFailure",
        lambda o: (
            spec(restartPolicy="OnFailure")(o),
            pod_status(containerStatuses=[{"name": "main", "state": {"terminated": {"exitCode": 1}}}])(o),
        ),
        pod_status(containerStatuses=RUNNING),
        [],
    ),
    (
        "container restarts under Always",
        lambda o: (spec(restartPolicy="Always")(o), pod_status(containerStatuses=TERMINATED)(o)),
        pod_status(containerStatuses=RUNNING),
        [],
    ),
]


@pytest.mark.parametrize(
    ("old_change", "new_change", "expected"), [c[1:] for c in STATUS_CASES], ids=[c[0] for c in STATUS_CASES]
)
def test_status_update(old_change: Change, new_change: Change, expected: list[str]) -> None:
    old = mutated(pod(), old_change)
    assert render(validate_status_update(POD, mutated(old, new_change), old)) == expected


@pytest.mark.parametrize(
    ("binding", "expected"),
    [
        ({"target": {"kind": "Node", "name": "worker-1"}}, []),
        ({"target": {"name": "worker-1"}}, []),
        (
            {"target": {"kind": "Pod", "name": "x"}},
            ['target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"'],
        ),
        ({"target": {}}, ["target.name: Required value"]),
    ],
)
def test_binding(binding: Obj, expected: list[str]) -> None:
    assert render(validate_pod_binding(binding)) == expected
