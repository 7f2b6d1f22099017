"""``draplane driver``: the command line of the DRA driver.

Why this module exists: the flags and their defaults belong with the driver;
``services/cmd`` only needs ``add_parser`` to expose the subcommand::

    draplane driver --node node-1 [--driver gpu.example.com] [--inventory FILE]
                    [--state-dir DIR] [--control-plane] [--decommission] ...
    draplane driver --control-plane            # only the classic controller
    draplane driver --node node-1 --gpu-partitions 4 [--allow-multiple-allocations]
    draplane driver --node node-1 --profile net  # shared NICs of net.example.com
    draplane driver --node node-1 --driver-profile gpu,partitions=4   # or DRIVER_PROFILE=gpu,partitions=4

SIGTERM and SIGINT stop the driver cleanly (socket removed, checkpoint
closed; slices deleted with ``--decommission-on-exit``).
"""

from __future__ import annotations

import argparse
import os
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
from services.driver.inventory import InventoryError
from services.driver.profiles import (
    GPU,
    PROFILES,
    DriverProfile,
    parse_device_health,
    parse_device_taint,
    parse_profile_spec,
)
from services.driver.service import DEFAULT_DRIVER, DriverOptions, DriverService, controller_lease_name
from services.runtime.logs import setup_logging
from services.runtime.snapshot import SnapshotStore

PROFILE_ENV = "DRIVER_PROFILE"
"""The environment variable ``--driver-profile`` defaults to (a compose service's ``environment``)."""


def default_state_dir(data: str, node: str) -> Path:
    """A node's state directory (its "/var/lib/kubelet"): ``<data>/nodes/<node>``."""
    return Path(data) / "nodes" / (node or "control-plane")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_bus_argument(p)
    add_common_arguments(p)
    p.add_argument("--data", default=DEFAULT_DATA, help="data directory (default state dirs live under it)")
    p.add_argument("--node", default=os.environ.get("NODE_NAME", ""), help="the node this driver serves ($NODE_NAME)")
    p.add_argument(
        "--driver", default="", help=f"the driver name (default {DEFAULT_DRIVER}, net.example.com for --profile net)"
    )
    p.add_argument("--inventory", type=Path, help="YAML inventory of devices (default: dra-example-driver's 8 GPUs)")
    p.add_argument("--num-devices", type=int, default=8, help="GPUs in the default inventory (default 8)")
    p.add_argument(
        "--state-dir", type=Path, help="the node's state directory, shared with its node agent (<data>/nodes/<node>)"
    )
    p.add_argument("--cdi-root", type=Path, help="where CDI spec files go (default <state-dir>/cdi)")
    p.add_argument("--nvidia-smi", default="nvidia-smi", help="nvidia-smi to discover real GPUs with")
    p.add_argument("--no-nvidia-smi", action="store_true", help="never discover hardware; use the inventory")
    p.add_argument(
        "--control-plane",
        action="store_true",
        help="be the classic DRA control-plane controller for claims with spec.controller = --driver "
        "(several replicas may run: one acts, chosen by leader election; see --leader-elect)",
    )
    p.add_argument("--decommission", action="store_true", help="delete this node's ResourceSlices and exit")
    p.add_argument("--decommission-on-exit", action="store_true", help="delete the ResourceSlices when stopping")
    p.add_argument("--metrics-listen", default="", help="HOST:PORT to serve /metrics and /healthz on")
    # Leader election of the control-plane controller (several --control-plane replicas, one acting).
    add_leader_election_arguments(p, resource_name=None, shown_name=controller_lease_name("<driver>"))
    add_profile_arguments(p)


def add_profile_arguments(p: argparse.ArgumentParser) -> None:
    """The flags that choose what a simulated node publishes (`services.driver.profiles`)."""
    g = p.add_argument_group("device profile (simulated nodes; replaces --inventory when anything but plain GPUs)")
    g.add_argument(
        "--driver-profile",
        default=os.environ.get(PROFILE_ENV, ""),
        metavar="KIND[,OPTION...]",
        help="the whole profile in `draplane up --driver-profile`'s words, e.g. gpu,partitions=4 "
        f"(default ${PROFILE_ENV}: how docker-compose.yml and ops/compose/run-local set it); "
        "replaces the flags below, and names the driver unless --driver does",
    )
    g.add_argument("--profile", choices=PROFILES, default=GPU, help="gpu (GPUs) or net (shared NICs, net.example.com)")
    g.add_argument(
        "--gpu-partitions",
        type=int,
        default=0,
        metavar="N",
        help="per GPU a counter set (memory, compute), N partition devices and a full-GPU device drawing on it",
    )
    g.add_argument(
        "--allow-multiple-allocations",
        action="store_true",
        help="GPUs that several claims share, with a requestPolicy on memory and compute",
    )
    g.add_argument(
        "--binding-conditions",
        action="store_true",
        help="devices carry bindingConditions/bindingFailureConditions; the driver sets them True after allocation",
    )
    g.add_argument("--binds-to-node", action="store_true", help="with --binding-conditions: bindsToNode on each device")
    g.add_argument(
        "--device-taint",
        action="append",
        default=[],
        metavar="DEVICE=KEY[=VALUE]:EFFECT",
        help="a taint the driver publishes on a device (repeatable)",
    )
    g.add_argument(
        "--device-health",
        action="append",
        default=[],
        metavar="DEVICE=Healthy|Unhealthy|Unknown",
        help="the health the driver reports for a device (default Healthy; repeatable)",
    )
    g.add_argument("--no-device-status", action="store_true", help="do not write status.devices after prepare")


def driver_and_profile(args: argparse.Namespace) -> tuple[str, DriverProfile]:
    """The driver name and profile: ``--driver-profile`` when given, else the separate flags; a bad one is a
    one-line error."""
    try:
        if args.driver_profile:
            name, profile = parse_profile_spec(args.driver_profile)
            return args.driver or name, profile
        profile = DriverProfile(
            kind=args.profile,
            count=args.num_devices,
            partitions=args.gpu_partitions,
            allow_multiple_allocations=args.allow_multiple_allocations,
            binding_conditions=args.binding_conditions,
            binds_to_node=args.binds_to_node,
            taints=tuple(parse_device_taint(t) for t in args.device_taint),
            health=tuple(parse_device_health(h) for h in args.device_health),
        )
        return args.driver or profile.default_driver, profile
    except InventoryError as err:
        raise SystemExit(f"draplane driver: {err}") from None


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("driver", help="a DRA driver: ResourceSlices, prepare/unprepare with CDI, classic controller")
    add_arguments(p)
    p.set_defaults(run=run)


def options_from(args: argparse.Namespace) -> DriverOptions:
    driver, profile = driver_and_profile(args)
    return DriverOptions(
        node=args.node,
        driver=driver,
        profile=profile,
        device_status=not args.no_device_status,
        state_dir=args.state_dir or default_state_dir(args.data, args.node),
        inventory=args.inventory,
        num_devices=args.num_devices,
        nvidia_smi=None if args.no_nvidia_smi else args.nvidia_smi,
        cdi_root=args.cdi_root,
        control_plane=args.control_plane,
        decommission_on_exit=args.decommission_on_exit,
        leader_election=leader_election_from(args, resource_name=controller_lease_name(args.driver))
        if args.control_plane
        else None,
    )


def run(args: argparse.Namespace) -> int:
    if not args.node and (args.decommission or not args.control_plane):
        raise SystemExit("draplane driver: --node is required (unless only --control-plane runs)")
    parse_gates(args)  # the flags are checked like every component's; this one reads no gate
    setup_logging("driver", level=args.log_level, json=json_logs(args))
    options = options_from(args)
    url = args.bus or default_bus(args.data)

    async def main() -> int:
        bus = open_bus(url)
        try:
            await stopping.unless_stopped(start_bus(bus))
            snapshot = SnapshotStore(options.state_dir / "driver" / f"{options.driver}-view.db")
            service = DriverService(bus, options, snapshot=snapshot)
            if args.decommission:
                await stopping.unless_stopped(service.decommission())
                return 0
            return await run_component(
                "driver", service.run(), [service.registry], args.metrics_listen, service.ready.is_set
            )
        finally:
            await bus.close()

    return stopping.run(main)
