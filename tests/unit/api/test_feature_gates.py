"""Feature gates: kube's --feature-gates syntax, defaults per release, error texts and dependency checks.

Tests that depend on defaults pin the release they test (``release="1.31"``,
the seeds' behaviour, or ``"1.37"``, the default). The 1.37 stages,
defaults and locks are k8s.io/kubernetes@v1.37.2 pkg/features/kube_features.go;
the refusals' wording is component-base@v0.37.2 featuregate/feature_gate.go
(``unsafeSetFromMap``), read, not run.
"""

from __future__ import annotations

import pytest

from services.kube.feature_gates import (
    DRA_ADMIN_ACCESS,
    DRA_CONSUMABLE_CAPACITY,
    DRA_CONTROL_PLANE_CONTROLLER,
    DRA_DEVICE_BINDING_CONDITIONS,
    DRA_DEVICE_TAINT_RULES,
    DRA_DEVICE_TAINTS,
    DRA_EXTENDED_RESOURCE,
    DRA_PARTITIONABLE_DEVICES,
    DRA_PRIORITIZED_LIST,
    DRA_RESOURCE_CLAIM_DEVICE_STATUS,
    DRA_SCHEDULER_FILTER_TIMEOUT,
    DYNAMIC_RESOURCE_ALLOCATION,
    SCHEDULER_POP_FROM_BACKOFF_Q,
    FeatureGateError,
    FeatureGates,
    parse_go_bool,
)
from services.kube.feature_gates_table import features_at

GATES_1_37 = [
    DRA_PRIORITIZED_LIST,
    DRA_RESOURCE_CLAIM_DEVICE_STATUS,
    DRA_DEVICE_TAINTS,
    DRA_DEVICE_TAINT_RULES,
    DRA_PARTITIONABLE_DEVICES,
    DRA_CONSUMABLE_CAPACITY,
    DRA_DEVICE_BINDING_CONDITIONS,
    DRA_EXTENDED_RESOURCE,
    DRA_SCHEDULER_FILTER_TIMEOUT,
    SCHEDULER_POP_FROM_BACKOFF_Q,  # 1.33's, a kube-scheduler gate
]


def test_defaults_at_1_31() -> None:
    gates = FeatureGates(release="1.31")  # the seeds' release: --emulated-version=1.31
    assert gates != FeatureGates()  # the default release is 1.37
    assert gates.as_dict() == {
        DYNAMIC_RESOURCE_ALLOCATION: True,  # draplane: DRA is the product (kube 1.31 defaults it off)
        DRA_CONTROL_PLANE_CONTROLLER: False,
        DRA_ADMIN_ACCESS: False,
        **{name: False for name in GATES_1_37},  # pre-alpha at 1.31
    }
    assert gates.dynamic_resource_allocation and not gates.dra_control_plane_controller and not gates.dra_admin_access
    assert str(gates) == ""
    assert FeatureGates.parse("", release="1.31") == gates


# name: (stage, default, locked) at 1.37
SPECS_1_37 = {
    DYNAMIC_RESOURCE_ALLOCATION: ("GA", True, True),
    DRA_CONTROL_PLANE_CONTROLLER: ("ALPHA", False, False),  # draplane: classic DRA through v1alpha3
    DRA_ADMIN_ACCESS: ("GA", True, True),
    DRA_PRIORITIZED_LIST: ("GA", True, True),
    DRA_RESOURCE_CLAIM_DEVICE_STATUS: ("GA", True, True),
    DRA_DEVICE_TAINTS: ("GA", True, False),
    DRA_DEVICE_TAINT_RULES: ("GA", True, False),
    DRA_PARTITIONABLE_DEVICES: ("BETA", True, False),
    DRA_CONSUMABLE_CAPACITY: ("BETA", True, False),
    DRA_DEVICE_BINDING_CONDITIONS: ("BETA", True, False),
    DRA_EXTENDED_RESOURCE: ("GA", True, True),
    DRA_SCHEDULER_FILTER_TIMEOUT: ("BETA", True, False),
    SCHEDULER_POP_FROM_BACKOFF_Q: ("BETA", True, False),
}


def test_specs_and_defaults_at_1_37() -> None:
    specs = features_at("1.37")
    assert {name: (s.pre_release, s.default, s.lock_to_default) for name, s in specs.items()} == SPECS_1_37
    gates = FeatureGates(release="1.37")
    assert gates.as_dict() == {name: spec[1] for name, spec in SPECS_1_37.items()}
    assert FeatureGates.parse("", release="1.37") == gates == FeatureGates()  # 1.37: the default release
    assert FeatureGates.parse("") == gates


def test_unsupported_release() -> None:
    with pytest.raises(ValueError, match=r"unsupported release '1\.33'"):
        FeatureGates(release="1.33")


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("DRAAdminAccess=false", "cannot set feature gate DRAAdminAccess to false, feature is locked to true"),
        ("DRAPrioritizedList=false", "cannot set feature gate DRAPrioritizedList to false, feature is locked to true"),
        (
            "DRAResourceClaimDeviceStatus=false",
            "cannot set feature gate DRAResourceClaimDeviceStatus to false, feature is locked to true",
        ),
        ("DRAExtendedResource=0", "cannot set feature gate DRAExtendedResource to false, feature is locked to true"),
        (
            "DynamicResourceAllocation=false",
            "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true",
        ),
        (
            "DRAAdminAccess=false,DRAPrioritizedList=false",
            "[cannot set feature gate DRAAdminAccess to false, feature is locked to true, "
            "cannot set feature gate DRAPrioritizedList to false, feature is locked to true]",
        ),
        (
            "DRADeviceTaints=false",
            "DRADeviceTaintRules is enabled, but depends on features that are disabled: [DRADeviceTaints]",
        ),
        (
            "DRAControlPlaneController=yes",
            'invalid value of DRAControlPlaneController=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
        ),
        ("DRAFoo=true", "unrecognized feature gate: DRAFoo"),
    ],
)
def test_refusals_at_1_37(flag: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as err:
        FeatureGates.parse(flag, release="1.37")
    assert str(err.value) == message


@pytest.mark.parametrize("gate", GATES_1_37)
@pytest.mark.parametrize("value", ["true", "false"])
def test_1_37_gates_are_pre_alpha_at_1_31(gate: str, value: str) -> None:
    with pytest.raises(FeatureGateError) as err:
        FeatureGates.parse(f"{gate}={value}", release="1.31")
    assert str(err.value) == (
        f"cannot set feature gate {gate} to {value}, feature is PreAlpha at emulated version 1.31, "
        "min compatibility version 1.30"
    )


@pytest.mark.parametrize(
    ("flag", "enabled", "disabled"),
    [
        ("DRAAdminAccess=true,DRAPrioritizedList=true", [DRA_ADMIN_ACCESS, DRA_PRIORITIZED_LIST], []),
        ("DRADeviceTaints=false,DRADeviceTaintRules=false", [], [DRA_DEVICE_TAINTS, DRA_DEVICE_TAINT_RULES]),
        ("DRADeviceTaintRules=false", [DRA_DEVICE_TAINTS], [DRA_DEVICE_TAINT_RULES]),
        (
            "AllBeta=false",
            [DRA_DEVICE_TAINTS, DRA_PRIORITIZED_LIST, DRA_ADMIN_ACCESS],
            [
                DRA_PARTITIONABLE_DEVICES,
                DRA_CONSUMABLE_CAPACITY,
                DRA_DEVICE_BINDING_CONDITIONS,
                DRA_SCHEDULER_FILTER_TIMEOUT,
                SCHEDULER_POP_FROM_BACKOFF_Q,
            ],
        ),
        ("AllBeta=false,DRAConsumableCapacity=true", [DRA_CONSUMABLE_CAPACITY], [DRA_PARTITIONABLE_DEVICES]),
        ("AllAlpha=true", [DRA_CONTROL_PLANE_CONTROLLER, DYNAMIC_RESOURCE_ALLOCATION], []),
        ("DRAControlPlaneController=true", [DRA_CONTROL_PLANE_CONTROLLER], []),
        ("DynamicResourceAllocation=true", [DYNAMIC_RESOURCE_ALLOCATION], []),
        ("SchedulerPopFromBackoffQ=false", [DRA_SCHEDULER_FILTER_TIMEOUT], [SCHEDULER_POP_FROM_BACKOFF_Q]),
    ],
)
def test_parse_at_1_37(flag: str, enabled: list[str], disabled: list[str]) -> None:
    gates = FeatureGates.parse(flag, release="1.37")
    assert [gates.enabled(g) for g in enabled] == [True] * len(enabled)
    assert [gates.enabled(g) for g in disabled] == [False] * len(disabled)
    assert gates.with_overrides({}).release == "1.37"


def test_known_features_help_at_1_37() -> None:
    """GA and pre-alpha gates are not listed, as component-base's KnownFeatures leaves them out."""
    assert FeatureGates.known_features("1.37") == [
        "AllAlpha=true|false (ALPHA - default=false)",
        "AllBeta=true|false (BETA - default=false)",
        "DRAConsumableCapacity=true|false (BETA - default=true)",
        "DRAControlPlaneController=true|false (ALPHA - default=false)",
        "DRADeviceBindingConditions=true|false (BETA - default=true)",
        "DRAPartitionableDevices=true|false (BETA - default=true)",
        "DRASchedulerFilterTimeout=true|false (BETA - default=true)",
        "SchedulerPopFromBackoffQ=true|false (BETA - default=true)",
    ]


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        ("DynamicResourceAllocation=true,DRAControlPlaneController=false", (True, False, False)),
        ("DRAControlPlaneController=true", (True, True, False)),
        ("DRAAdminAccess=true", (True, False, True)),
        ("DynamicResourceAllocation=false", (False, False, False)),
        (" DRAAdminAccess = T ,,DRAControlPlaneController=1,", (True, True, True)),
        ("DRAAdminAccess=TRUE,DRAAdminAccess=False", (True, False, False)),
        ("AllAlpha=true", (True, True, True)),
        ("AllAlpha=true,DRAAdminAccess=false", (True, True, False)),
        ("DRAAdminAccess=false,AllAlpha=true", (True, True, False)),
        ("AllAlpha=false", (False, False, False)),
        ("AllBeta=true", (True, False, False)),
    ],
)
def test_parse_at_1_31(flag: str, expected: tuple[bool, bool, bool]) -> None:
    gates = FeatureGates.parse(flag, release="1.31")
    got = (gates.dynamic_resource_allocation, gates.dra_control_plane_controller, gates.dra_admin_access)
    assert got == expected


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("Foo=true", "unrecognized feature gate: Foo"),
        (
            "DynamicResourceAllocation=true,dynamicresourceallocation=true",
            "unrecognized feature gate: dynamicresourceallocation",
        ),
        ("DRAControlPlaneController", "missing bool value for DRAControlPlaneController"),
        (
            "DRAAdminAccess=yes",
            'invalid value of DRAAdminAccess=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
        ),
        (
            "DynamicResourceAllocation=false,DRAControlPlaneController=true",
            "DRAControlPlaneController feature requires DynamicResourceAllocation feature to be enabled",
        ),
        (
            "AllAlpha=false,DRAControlPlaneController=true",
            "DRAControlPlaneController feature requires DynamicResourceAllocation feature to be enabled",
        ),
    ],
)
def test_errors_are_worded_as_kube_at_1_31(flag: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as err:
        FeatureGates.parse(flag, release="1.31")
    assert str(err.value) == message
    assert err.value.flag_error(flag) == f'invalid argument "{flag}" for "--feature-gates" flag: {message}'


def test_dependency_check_can_be_deferred() -> None:
    gates = FeatureGates.parse(
        "DynamicResourceAllocation=false,DRAControlPlaneController=true", validate=False, release="1.31"
    )
    assert gates.dra_control_plane_controller and not gates.dynamic_resource_allocation
    with pytest.raises(FeatureGateError, match="requires DynamicResourceAllocation"):
        gates.validate()


def test_string_form_and_overrides() -> None:
    gates = FeatureGates.parse("DRAControlPlaneController=true,DRAAdminAccess=1", release="1.31")
    assert str(gates) == "DRAAdminAccess=true,DRAControlPlaneController=true"
    assert FeatureGates.parse(str(gates), release="1.31") == gates
    more = gates.with_overrides({DRA_ADMIN_ACCESS: False})
    assert (more.dra_admin_access, gates.dra_admin_access) == (False, True)
    with pytest.raises(FeatureGateError):
        gates.with_overrides({DYNAMIC_RESOURCE_ALLOCATION: False})
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: Nope"):
        FeatureGates.from_map({"Nope": True})


def test_gates_are_immutable() -> None:
    gates = FeatureGates.parse("DRAAdminAccess=true")
    with pytest.raises(AttributeError):
        gates.overrides = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        gates.overrides[DRA_ADMIN_ACCESS] = False  # type: ignore[index]


def test_unknown_gate_query_is_an_error() -> None:
    with pytest.raises(FeatureGateError, match="not registered"):
        FeatureGates().enabled("SidecarContainers")


def test_known_features_help_at_1_31() -> None:
    assert FeatureGates.known_features("1.31") == [
        "AllAlpha=true|false (ALPHA - default=false)",
        "AllBeta=true|false (BETA - default=false)",
        "DRAAdminAccess=true|false (ALPHA - default=false)",
        "DRAControlPlaneController=true|false (ALPHA - default=false)",
        "DynamicResourceAllocation=true|false (ALPHA - default=true)",
    ]
    assert FeatureGates.known_features() == FeatureGates.known_features("1.37")  # the default release


@pytest.mark.parametrize("text", ["1", "t", "T", "TRUE", "true", "True"])
def test_go_true(text: str) -> None:
    assert parse_go_bool(text) is True


@pytest.mark.parametrize("text", ["0", "f", "F", "FALSE", "false", "False"])
def test_go_false(text: str) -> None:
    assert parse_go_bool(text) is False


@pytest.mark.parametrize("text", ["yes", "tRue", "", " true", "2"])
def test_go_bool_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="invalid syntax"):
        parse_go_bool(text)
