"""The ``--leader-elect*`` flags of the replicated components, as kube-scheduler's and kube-controller-manager's.

Why this module exists: ``draplane scheduler``, ``draplane controller-manager``
and ``draplane driver --control-plane`` take the same flags, with
component-base's names, defaults, help and Go syntax (``--leader-elect=false``,
durations such as ``15s`` or ``1m30s``); each command only says its Lease's
default name. The result is a `LeaderElectionConfig` whose timings were
checked as client-go's NewLeaderElector checks them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from services.apiserver.http.scope import parse_duration
from services.kube.feature_gates import parse_go_bool
from services.kube.leader_election import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
    LEASE_NAMESPACE,
    ElectionTimings,
)
from services.runtime.leader_election import LeaderElectionConfig

RESOURCE_LOCK = "leases"  # the only lock Kubernetes still supports


def _go_bool(flag: str) -> Callable[[str], bool]:
    def parse(text: str) -> bool:
        try:
            return parse_go_bool(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f'invalid argument "{text}" for "{flag}" flag: {exc}') from None

    return parse


def _go_duration(flag: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        seconds = parse_duration(text)
        if seconds is None:
            raise argparse.ArgumentTypeError(
                f'invalid argument "{text}" for "{flag}" flag: time: invalid duration "{text}"'
            )
        return seconds

    return parse


def _seconds(value: float) -> str:
    return f"{value:g}s"


def add_leader_election_arguments(
    parser: argparse.ArgumentParser, *, resource_name: str | None, shown_name: str = ""
) -> None:
    """component-base's leader election flags; the Lease defaults to ``kube-system/<resource_name>``.

    A command whose Lease name depends on another flag passes None (and the
    name as its help shows it) and fills it in after parsing.
    """
    parser.add_argument(
        "--leader-elect",
        type=_go_bool("--leader-elect"),
        nargs="?",
        const=True,
        default=True,
        metavar="BOOL",
        help="Start a leader election client and gain leadership before executing the main loop. "
        "Enable this when running replicated components for high availability. (default true)",
    )
    parser.add_argument(
        "--leader-elect-lease-duration",
        type=_go_duration("--leader-elect-lease-duration"),
        default=DEFAULT_LEASE_DURATION,
        metavar="DURATION",
        help="The duration that non-leader candidates will wait after observing a leadership renewal until "
        "attempting to acquire leadership of a led but unrenewed leader slot. (default "
        f"{_seconds(DEFAULT_LEASE_DURATION)})",
    )
    parser.add_argument(
        "--leader-elect-renew-deadline",
        type=_go_duration("--leader-elect-renew-deadline"),
        default=DEFAULT_RENEW_DEADLINE,
        metavar="DURATION",
        help="The interval between attempts by the acting master to renew a leadership slot before it stops "
        f"leading. This must be less than the lease duration. (default {_seconds(DEFAULT_RENEW_DEADLINE)})",
    )
    parser.add_argument(
        "--leader-elect-retry-period",
        type=_go_duration("--leader-elect-retry-period"),
        default=DEFAULT_RETRY_PERIOD,
        metavar="DURATION",
        help="The duration the clients should wait between attempting acquisition and renewal of a leadership. "
        f"(default {_seconds(DEFAULT_RETRY_PERIOD)})",
    )
    parser.add_argument(
        "--leader-elect-resource-lock",
        choices=[RESOURCE_LOCK],
        default=RESOURCE_LOCK,
        help="The type of resource object that is used for locking during leader election. (default leases)",
    )
    parser.add_argument(
        "--leader-elect-resource-name",
        default=resource_name,
        help="The name of resource object that is used for locking during leader election. "
        f"(default {resource_name or shown_name})",
    )
    parser.add_argument(
        "--leader-elect-resource-namespace",
        default=LEASE_NAMESPACE,
        help="The namespace of resource object that is used for locking during leader election. "
        f"(default {LEASE_NAMESPACE})",
    )


def leader_election_from(args: argparse.Namespace, *, resource_name: str = "") -> LeaderElectionConfig:
    """The flags as a config (``resource_name`` when the flag was left to the command); SystemExit with
    client-go's message when the durations do not fit together."""
    timings = ElectionTimings(
        lease_duration=args.leader_elect_lease_duration,
        renew_deadline=args.leader_elect_renew_deadline,
        retry_period=args.leader_elect_retry_period,
    )
    try:
        return LeaderElectionConfig(
            name=args.leader_elect_resource_name or resource_name,
            namespace=args.leader_elect_resource_namespace,
            enabled=bool(args.leader_elect),
            timings=timings,
        )
    except ValueError as exc:
        raise SystemExit(f"couldn't create leader elector: {exc}") from None
