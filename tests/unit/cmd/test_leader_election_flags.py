"""The ``--leader-elect*`` flags: kube-scheduler's names, defaults and Go syntax, and client-go's checks."""

from __future__ import annotations

import argparse

import pytest

from services.cli import build_parser
from services.cmd.driver import options_from
from services.cmd.leader_election_flags import add_leader_election_arguments, leader_election_from
from services.kube.leader_election import ElectionTimings


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_leader_election_arguments(parser, resource_name="kube-scheduler")
    return parser.parse_args(argv)


@pytest.mark.parametrize(
    ("argv", "enabled", "timings", "where"),
    [
        ((), True, ElectionTimings(15, 10, 2), ("kube-system", "kube-scheduler")),
        (("--leader-elect",), True, ElectionTimings(15, 10, 2), ("kube-system", "kube-scheduler")),
        (("--leader-elect=false",), False, ElectionTimings(15, 10, 2), ("kube-system", "kube-scheduler")),
        (("--leader-elect=F",), False, ElectionTimings(15, 10, 2), ("kube-system", "kube-scheduler")),
        (
            (
                "--leader-elect-lease-duration=1m30s",
                "--leader-elect-renew-deadline=500ms",
                "--leader-elect-retry-period=100ms",
            ),
            True,
            ElectionTimings(90, 0.5, 0.1),
            ("kube-system", "kube-scheduler"),
        ),
        (
            ("--leader-elect-resource-name=mine", "--leader-elect-resource-namespace=ha"),
            True,
            ElectionTimings(15, 10, 2),
            ("ha", "mine"),
        ),
    ],
)
def test_flags(argv: tuple[str, ...], enabled: bool, timings: ElectionTimings, where: tuple[str, str]) -> None:
    config = leader_election_from(parse(*argv))
    assert config.enabled is enabled
    assert config.timings == timings
    assert (config.namespace, config.name) == where
    host, _, uid = config.identity.rpartition("_")
    assert host and len(uid) == 36  # <hostname>_<uuid>


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--leader-elect=maybe",), 'invalid argument "maybe" for "--leader-elect" flag: strconv.ParseBool'),
        (("--leader-elect-lease-duration=15",), 'time: invalid duration "15"'),
    ],
)
def test_malformed_values_are_refused_in_go_wording(argv: tuple[str, ...], message: str) -> None:
    with pytest.raises(argparse.ArgumentError, match=message):
        parse(*argv)


def test_durations_that_do_not_fit_are_refused_as_client_go_refuses_them() -> None:
    with pytest.raises(SystemExit, match="leaseDuration must be greater than renewDeadline"):
        leader_election_from(parse("--leader-elect-lease-duration=10s"))
    # Not checked when leader election is off, as component-base validates them only then.
    assert not leader_election_from(parse("--leader-elect=false", "--leader-elect-lease-duration=10s")).enabled


def test_the_driver_names_its_lease_after_the_driver() -> None:
    args = build_parser().parse_args(["driver", "--control-plane", "--driver", "gpu.example.com"])
    options = options_from(args)
    assert options.leader_election is not None
    assert (options.leader_election.namespace, options.leader_election.name) == (
        "kube-system",
        "dra-controller-leader-gpu-example-com",
    )
