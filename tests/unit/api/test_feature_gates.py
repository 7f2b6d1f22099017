"""Feature gates: kube's --feature-gates syntax, defaults, error texts and the DRA dependency check."""

from __future__ import annotations

import pytest

from services.kube.feature_gates import (
    DRA_ADMIN_ACCESS,
    DRA_CONTROL_PLANE_CONTROLLER,
    DYNAMIC_RESOURCE_ALLOCATION,
    FeatureGateError,
    FeatureGates,
    parse_go_bool,
)


def test_defaults() -> None:
    gates = FeatureGates()
    assert gates.as_dict() == {
        DYNAMIC_RESOURCE_ALLOCATION: True,  # draplane: DRA is the product (kube 1.31 defaults it off)
        DRA_CONTROL_PLANE_CONTROLLER: False,
        DRA_ADMIN_ACCESS: False,
    }
    assert gates.dynamic_resource_allocation and not gates.dra_control_plane_controller and not gates.dra_admin_access
    assert str(gates) == ""
    assert FeatureGates.parse("") == gates


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
def test_parse(flag: str, expected: tuple[bool, bool, bool]) -> None:
    gates = FeatureGates.parse(flag)
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
def test_errors_are_worded_as_kube(flag: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as err:
        FeatureGates.parse(flag)
    assert str(err.value) == message
    assert err.value.flag_error(flag) == f'invalid argument "{flag}" for "--feature-gates" flag: {message}'


def test_dependency_check_can_be_deferred() -> None:
    gates = FeatureGates.parse("DynamicResourceAllocation=false,DRAControlPlaneController=true", validate=False)
    assert gates.dra_control_plane_controller and not gates.dynamic_resource_allocation
    with pytest.raises(FeatureGateError, match="requires DynamicResourceAllocation"):
        gates.validate()


def test_string_form_and_overrides() -> None:
    gates = FeatureGates.parse("DRAControlPlaneController=true,DRAAdminAccess=1")
    assert str(gates) == "DRAAdminAccess=true,DRAControlPlaneController=true"
    assert FeatureGates.parse(str(gates)) == gates
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


def test_known_features_help() -> None:
    assert "DynamicResourceAllocation=true|false (ALPHA - default=true)" in FeatureGates.known_features()
    assert "DRAAdminAccess=true|false (ALPHA - default=false)" in FeatureGates.known_features()
    assert "AllAlpha=true|false (ALPHA - default=false)" in FeatureGates.known_features()


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
