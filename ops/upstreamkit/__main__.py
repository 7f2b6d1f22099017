"""``ops/upstream``'s command line: build, locate and run the upstream binaries.

    ops/upstream build [--version 1.31.14|1.37.2 ...] [--all]
    ops/upstream path NAME [--version V]
    ops/upstream apiserver [--version V]
    ops/upstream components --kubeconfig F [--version V]

``build`` and ``path`` use the standard library only (``./ops/test`` runs
``build`` with the system Python before the venv exists); ``apiserver`` and
``components`` import `ops.upstreamkit.run`.
"""

from __future__ import annotations

import argparse
import sys

from ops.upstreamkit.build import ALL_TARGETS, DEFAULT_TARGETS, Target, binary_path, build
from ops.upstreamkit.versions import DEFAULT_KUBE_VERSION, ETCD, KUBE_COMPONENTS, NAMES, normalize_version


def _targets(versions: list[str] | None, *, everything: bool) -> list[Target]:
    if everything:
        return list(ALL_TARGETS)
    if not versions:
        return list(DEFAULT_TARGETS)
    chosen: list[Target] = []
    for version in map(normalize_version, versions):
        chosen += [(name, version) for name in KUBE_COMPONENTS]
        if version == DEFAULT_KUBE_VERSION:
            chosen.insert(1, next(target for target in DEFAULT_TARGETS if target[0] == ETCD))
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ops/upstream", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_parser = commands.add_parser("build", help="build the missing binaries into .cache/upstream")
    build_parser.add_argument("--version", action="append", help="a Kubernetes version (repeatable)")
    build_parser.add_argument("--all", action="store_true", help="every version (1.31.14 and 1.37.2) and etcd")
    path_parser = commands.add_parser("path", help="print a cached binary's path")
    path_parser.add_argument("name", choices=NAMES)
    path_parser.add_argument("--version", default=None)
    apiserver_parser = commands.add_parser("apiserver", help="etcd + kube-apiserver on loopback; prints the kubeconfig")
    apiserver_parser.add_argument("--version", default=DEFAULT_KUBE_VERSION)
    components_parser = commands.add_parser(
        "components", help="kube-scheduler and kube-controller-manager against a kubeconfig (e.g. a draplane stack)"
    )
    components_parser.add_argument("--kubeconfig", required=True)
    components_parser.add_argument("--version", default=DEFAULT_KUBE_VERSION)
    components_parser.add_argument(
        "--content-type", default=None, help="e.g. application/json (default: the components' own, protobuf)"
    )
    args = parser.parse_args(argv)

    if args.command == "build":
        failures = build(_targets(args.version, everything=args.all), log=sys.stdout)
        for (name, version), error in failures:
            print(f"upstream: {name} v{version} failed: {error}", file=sys.stderr)
        return 1 if failures else 0
    if args.command == "path":
        path, reason = binary_path(args.name, args.version)
        if path is None:
            print(reason, file=sys.stderr)
            return 1
        print(path)
        return 0
    from ops.upstreamkit import cli_run

    if args.command == "apiserver":
        return cli_run.serve_apiserver(version=args.version)
    return cli_run.serve_components(kubeconfig=args.kubeconfig, version=args.version, content_type=args.content_type)


if __name__ == "__main__":
    sys.exit(main())
