"""`draplane scheduler`: kube-scheduler's DRA behaviour over the log, as ``system:kube-scheduler``."""

from __future__ import annotations

import argparse
import asyncio
import socket
from pathlib import Path

from services.bus import open_bus
from services.cmd import stopping
from services.cmd.common import (
    DEFAULT_DATA,
    add_bus_argument,
    add_common_arguments,
    default_bus,
    json_logs,
    parse_gates,
    start_bus,
)
from services.cmd.component import run_component
from services.cmd.leader_election_flags import add_leader_election_arguments, leader_election_from
from services.kube.leader_election import SCHEDULER_LEASE
from services.kube.structured import Features
from services.runtime.logs import setup_logging
from services.runtime.snapshot import SnapshotStore
from services.scheduler.dra.binding_conditions import validate_binding_timeout
from services.scheduler.plugins.dynamic_resources_args import PluginArgsError, filter_timeout
from services.scheduler.queue import (
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
)
from services.scheduler.service import SchedulerConfig, SchedulerService


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("scheduler", help="run the scheduler (queue, DRA plugin, structured allocator)")
    add_bus_argument(p)
    add_common_arguments(p)
    p.add_argument("--data", default=DEFAULT_DATA, help="directory for the informer snapshot (and the default --bus)")
    p.add_argument(
        "--metrics-listen",
        default="",
        help="HOST:PORT to serve /metrics (Prometheus text) and /healthz on; off when empty",
    )
    p.add_argument(
        "--pod-initial-backoff-seconds", type=float, default=DEFAULT_POD_INITIAL_BACKOFF, help="backoff after a failure"
    )
    p.add_argument("--pod-max-backoff-seconds", type=float, default=DEFAULT_POD_MAX_BACKOFF, help="longest backoff")
    p.add_argument(
        "--pod-max-in-unschedulable-pods-duration",
        type=float,
        default=DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        help="seconds after which an unschedulable pod is retried without a matching event",
    )
    p.add_argument(
        "--percentage-of-nodes-to-score",
        type=int,
        default=None,
        help="stop filtering after this percentage of nodes were found feasible (default: kube's adaptive rule)",
    )
    add_leader_election_arguments(p, resource_name=SCHEDULER_LEASE)
    p.add_argument(
        "--binding-timeout-seconds",
        type=float,
        default=None,
        help="DynamicResourcesArgs bindingTimeout: how long PreBind waits for devices' binding conditions "
        "(DRADeviceBindingConditions; at least 1, default 600)",
    )
    p.add_argument(
        "--dynamic-resources-filter-timeout-seconds",
        type=float,
        default=None,
        help="DynamicResources' filterTimeout: longest allocation attempt per node in Filter, 0 for none "
        "(default 10 with DRASchedulerFilterTimeout on)",
    )
    p.set_defaults(run=run)


def config_from(args: argparse.Namespace) -> SchedulerConfig:
    gates = parse_gates(args)
    refused = validate_binding_timeout(
        args.binding_timeout_seconds, enabled=Features.from_gates(gates).binding_conditions
    )
    if refused is not None:
        raise SystemExit(f"invalid --binding-timeout-seconds: {refused}")
    try:
        filter_timeout(gates, args.dynamic_resources_filter_timeout_seconds)
    except PluginArgsError as err:
        raise SystemExit(f"invalid DynamicResources args: {err}") from None
    return SchedulerConfig(
        gates=gates,
        binding_timeout=args.binding_timeout_seconds,
        dra_filter_timeout=args.dynamic_resources_filter_timeout_seconds,
        pod_initial_backoff=args.pod_initial_backoff_seconds,
        pod_max_backoff=args.pod_max_backoff_seconds,
        pod_max_in_unschedulable_pods_duration=args.pod_max_in_unschedulable_pods_duration,
        percentage_of_nodes_to_score=args.percentage_of_nodes_to_score,
        host=socket.gethostname(),
        leader_election=leader_election_from(args),
    )


async def announce_ready(service: SchedulerService) -> None:
    """One line on stdout once the informer has caught up and scheduling runs (for scripts and tests)."""
    await service.ready.wait()
    print("scheduler ready", flush=True)


def run(args: argparse.Namespace) -> int:
    setup_logging("scheduler", level=args.log_level, json=json_logs(args))
    config = config_from(args)
    url = args.bus or default_bus(args.data)

    async def main() -> int:
        bus = open_bus(url)
        try:
            await stopping.unless_stopped(start_bus(bus))
            service = SchedulerService(
                bus, config=config, snapshot=SnapshotStore(Path(args.data) / "scheduler" / "view.db")
            )
            ready = asyncio.create_task(announce_ready(service))
            try:
                return await run_component(
                    "scheduler", service.run(), [service.registry], args.metrics_listen, service.ready.is_set
                )
            finally:
                ready.cancel()
        finally:
            await bus.close()

    return stopping.run(main)
