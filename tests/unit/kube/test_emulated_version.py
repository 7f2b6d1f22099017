"""``--emulated-version``: kube-apiserver's syntax and errors, draplane's two releases, every command has it.

Expectations for the syntax and messages come from k8s.io/component-base
v0.37.2 (compatibility/registry.go ``toVersionMap``, ``AddFlags``) and
k8s.io/apimachinery v0.37.2 (util/version ``parse``); the refusal of a release
draplane does not have is draplane's (kube's is a range check).
"""

from __future__ import annotations

import argparse

import pytest

from services.cmd import apiserver, controller_manager, driver, nodeagent, scheduler, up
from services.cmd.common import parse_gates
from services.kube.emulated_version import EmulatedVersionError, parse_emulated_version

ACCEPTED = [
    ("", "1.37"),  # the default: today's DRA
    ("1.37", "1.37"),
    ("1.31", "1.31"),  # the seeds' release
    ("kube=1.31", "1.31"),
    (" kube = 1.31 ", "1.31"),
    ("v1.31", "1.31"),
    ("1.31.0", "1.31"),  # patch 0 is no patch
]


@pytest.mark.parametrize(("value", "release"), ACCEPTED)
def test_accepted(value: str, release: str) -> None:
    assert parse_emulated_version(value) == release


REFUSED = [
    ("1.33", "emulation version 1.33 is not one of [1.31, 1.37]"),
    ("1.38", "emulation version 1.38 is not one of [1.31, 1.37]"),
    ("kube=1.30", "emulation version 1.30 is not one of [1.31, 1.37]"),
    ("1.31.2", "patch version not allowed, got: kube=1.31.2"),
    ("wardle=1.2", "component not registered: wardle"),
    ("kube=1.31,kube=1.37", "duplicate version flag, kube=1.31 and kube=1.37"),
    ("1.31,1.37", "duplicate version flag, kube=1.31 and kube=1.37"),
    ("latest", 'could not parse "latest" as version'),
    ("1", 'illegal version string "1"'),
    ("1.31-rc.1", 'could not parse pre-release/metadata (-rc.1) in version "1.31-rc.1"'),
    ("1.031", 'illegal zero-prefixed version component "031" in "1.031"'),
]


@pytest.mark.parametrize(("value", "message"), REFUSED)
def test_refused(value: str, message: str) -> None:
    with pytest.raises(EmulatedVersionError) as err:
        parse_emulated_version(value)
    assert str(err.value) == message
    assert err.value.flag_error(value) == f'invalid argument "{value}" for "--emulated-version" flag: {message}'


@pytest.mark.parametrize("command", [apiserver, controller_manager, driver, nodeagent, scheduler, up])
def test_every_command_has_the_flag(command: object) -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    command.add_parser(sub)  # type: ignore[attr-defined]
    name = next(iter(sub.choices))
    args = parser.parse_args([name, "--emulated-version=1.31", "--feature-gates=DRAControlPlaneController=true"])
    gates = parse_gates(args)
    assert gates.release == "1.31" and gates.dra_control_plane_controller and not gates.dra_admin_access
    defaults = parse_gates(parser.parse_args([name]))
    assert defaults.release == "1.37" and defaults.dra_admin_access and defaults.enabled("DRAPrioritizedList")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--emulated-version=1.33"],
            'invalid argument "1.33" for "--emulated-version" flag: emulation version 1.33 is not one of [1.31, 1.37]',
        ),
        (
            # 1.37 locks DynamicResourceAllocation on; at 1.31 it may be turned off.
            ["--feature-gates=DynamicResourceAllocation=false"],
            "invalid argument 'DynamicResourceAllocation=false' for \"--feature-gates\" flag: cannot set feature "
            "gate DynamicResourceAllocation to false, feature is locked to true",
        ),
        (
            ["--emulated-version=1.31", "--feature-gates=DRAPrioritizedList=true"],
            "invalid argument 'DRAPrioritizedList=true' for \"--feature-gates\" flag: cannot set feature gate "
            "DRAPrioritizedList to true, feature is PreAlpha at emulated version 1.31, min compatibility version 1.30",
        ),
    ],
)
def test_bad_flags_are_one_line(argv: list[str], message: str) -> None:
    parser = argparse.ArgumentParser()
    up.add_parser(parser.add_subparsers())
    with pytest.raises(SystemExit) as exited:
        parse_gates(parser.parse_args(["up", *argv]))
    assert exited.value.code == message


def test_dynamic_resource_allocation_may_be_off_at_1_31() -> None:
    parser = argparse.ArgumentParser()
    up.add_parser(parser.add_subparsers())
    gates = parse_gates(
        parser.parse_args(["up", "--emulated-version=1.31", "--feature-gates=DynamicResourceAllocation=false"])
    )
    assert not gates.dynamic_resource_allocation
