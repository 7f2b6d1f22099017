"""Builds kube-apiserver, kube-scheduler, kube-controller-manager and etcd from the Go module proxy into the cache.

Why this module exists: draplane's upstream e2e test, the oracle suite and the
scheduler benchmark run the real components, unmodified, and nothing outside
the package registries can be downloaded here. So each binary is compiled from
its Go module: a throwaway module under ``.cache/upstream/src/<version>/``
requires ``k8s.io/kubernetes`` at the version and replaces every ``k8s.io/*``
staging module (which kubernetes' own go.mod points at ``./staging``) with its
published ``v0.<minor>.<patch>``; etcd comes from ``go.etcd.io/etcd/server/v3``.

Standard library only: ``./ops/test`` starts `main` with the system Python
before the venv exists. Every binary is written to a temporary name and
renamed, so a reader never sees half a file; a file lock (``.build.lock`` in
the cache) keeps two processes from building at once, and a second caller
waits and then finds the binaries built.

- `binary_path(name, version)` → ``(path, None)`` or ``(None, reason)``;
- `build(targets)` builds what is missing (idempotent), returns the failures;
- `DEFAULT_TARGETS` is what ``./ops/test`` needs, `ALL_TARGETS` adds 1.37.2.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from ops.upstreamkit.versions import (
    DEFAULT_KUBE_VERSION,
    ETCD,
    ETCD_VERSION,
    KUBE_COMPONENTS,
    KUBE_VERSIONS,
    binary_file,
    cache_root,
    normalize_version,
)

Target = tuple[str, str]  # (binary name, version)

# In the order others wait for them: the oracle suite needs kube-apiserver and etcd first.
DEFAULT_TARGETS: tuple[Target, ...] = (
    ("kube-apiserver", DEFAULT_KUBE_VERSION),
    (ETCD, ETCD_VERSION),
    ("kube-scheduler", DEFAULT_KUBE_VERSION),
    ("kube-controller-manager", DEFAULT_KUBE_VERSION),
)
ALL_TARGETS: tuple[Target, ...] = (
    *DEFAULT_TARGETS,
    *((name, version) for version in KUBE_VERSIONS if version != DEFAULT_KUBE_VERSION for name in KUBE_COMPONENTS),
)
LOCK_NAME = ".build.lock"


def go_binary() -> str | None:
    """The ``go`` command, or None when Go is not installed."""
    return shutil.which("go") or next((str(path) for path in (Path("/usr/local/go/bin/go"),) if path.exists()), None)


def binary_path(name: str, version: str | None = None) -> tuple[Path | None, str | None]:
    """A cached binary's path, or ``(None, reason)`` saying why it is not there."""
    path = binary_file(name, version)
    if path.is_file() and os.access(path, os.X_OK):
        return path, None
    reason = f"{path} is not built (run `ops/upstream build"
    if version is not None and name != ETCD and normalize_version(version) != DEFAULT_KUBE_VERSION:
        reason += f" --version {normalize_version(version)}"
    reason += "`)"
    if go_binary() is None:
        reason += "; Go is not installed, so it cannot be built here"
    return None, reason


def missing(targets: Sequence[Target]) -> list[Target]:
    return [(name, version) for name, version in targets if binary_path(name, version)[0] is None]


@contextlib.contextmanager
def build_lock(*, wait: bool = True) -> Iterator[bool]:
    """Holds the cache's build lock; yields False when ``wait`` is off and another process holds it."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / LOCK_NAME, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _go_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(GOFLAGS="-mod=mod", GOTOOLCHAIN="local", CGO_ENABLED="0")
    return env


def _run(command: Sequence[str], *, cwd: Path, log: TextIO) -> None:
    log.write(f"upstream: $ {' '.join(command)}  (in {cwd})\n")
    log.flush()
    completed = subprocess.run(
        ["nice", "-n", "10", *command], cwd=cwd, env=_go_env(), stdout=log, stderr=subprocess.STDOUT, check=False
    )
    if completed.returncode != 0:
        raise BuildError(f"`{' '.join(command)}` exited {completed.returncode}")


class BuildError(Exception):
    """A step of the build failed; the message names the command, the log has its output."""


def _module_info(go: str, module: str, *, cwd: Path, log: TextIO) -> dict[str, str]:
    """``go mod download -json`` of one module: its directory and go.mod in the module cache."""
    log.write(f"upstream: $ go mod download -json {module}\n")
    log.flush()
    completed = subprocess.run(
        [go, "mod", "download", "-json", module], cwd=cwd, env=_go_env(), capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        raise BuildError(f"go mod download {module} failed: {completed.stdout.strip()} {completed.stderr.strip()}")
    info: dict[str, str] = json.loads(completed.stdout)
    return info


def staging_modules(go_mod: str) -> list[str]:
    """The ``k8s.io/*`` modules that kubernetes' go.mod replaces with ``./staging`` directories."""
    modules = []
    for line in go_mod.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>" and parts[2].startswith("./staging/"):
            modules.append(parts[0])
    return sorted(set(modules))


def go_directive(go_mod: str) -> str:
    for line in go_mod.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "go":
            return parts[1]
    return "1.22.0"


# Staging modules whose release the Go module proxy does not serve ("This module version is not
# available"), built at the nearest earlier patch it serves. These three hold configuration types and
# helpers that did not change between the two patches.
UNSERVED_STAGING: dict[str, dict[str, str]] = {
    "1.31.14": {
        "k8s.io/kube-scheduler": "v0.31.13",
        "k8s.io/kube-controller-manager": "v0.31.13",
        "k8s.io/endpointslice": "v0.31.13",
    },
}
# The first line of a generated go.mod; a go.mod without it (an older generation) is written anew.
GENERATION = "// Generated by ops/upstreamkit/build.py to build upstream binaries (generation 2); not committed."


def staging_version(module: str, version: str) -> str:
    """The published version of a staging module that builds k8s.io/kubernetes ``version``."""
    bare = normalize_version(version)
    _, minor, patch = bare.split(".")
    return UNSERVED_STAGING.get(bare, {}).get(module, f"v0.{minor}.{patch}")


def kube_go_mod(version: str, *, staging: Sequence[str], go: str) -> str:
    """The throwaway module that builds k8s.io/kubernetes at ``version`` with published staging modules."""
    lines = [
        GENERATION,
        "module draplane.invalid/upstream/kube",
        "",
        f"go {go}",
        "",
        f"require k8s.io/kubernetes v{normalize_version(version)}",
        "",
        "replace (",
        *(f"\t{module} => {module} {staging_version(module, version)}" for module in staging),
        ")",
        "",
    ]
    return "\n".join(lines)


def _version_ldflags(version: str) -> str:
    bare = normalize_version(version)
    major, minor, _ = bare.split(".")
    flags = ["-s", "-w"]
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [
            f"-X {package}.gitVersion=v{bare}",
            f"-X {package}.gitMajor={major}",
            f"-X {package}.gitMinor={minor}",
            f"-X {package}.gitTreeState=clean",
            f"-X {package}.buildDate=1970-01-01T00:00:00Z",
        ]
    return " ".join(flags)


def _install(built: Path, destination: Path) -> None:
    """Moves a freshly built binary into place with one rename."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    built.chmod(0o755)
    os.replace(built, destination)


def _build_kube(go: str, version: str, names: Sequence[str], *, log: TextIO) -> None:
    bare = normalize_version(version)
    src = cache_root() / "src" / f"v{bare}"
    src.mkdir(parents=True, exist_ok=True)
    go_mod_file = src / "go.mod"
    if not go_mod_file.exists() or not go_mod_file.read_text().startswith(GENERATION):
        (src / "go.sum").unlink(missing_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix="upstream-mod-", dir=src.parent))
        try:
            (scratch / "go.mod").write_text("module draplane.invalid/probe\n\ngo 1.22.0\n")
            info = _module_info(go, f"k8s.io/kubernetes@v{bare}", cwd=scratch, log=log)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        kube_mod = Path(info["GoMod"]).read_text()
        text = kube_go_mod(bare, staging=staging_modules(kube_mod), go=go_directive(kube_mod))
        temporary = go_mod_file.with_suffix(".tmp")
        temporary.write_text(text)
        os.replace(temporary, go_mod_file)
    out = Path(tempfile.mkdtemp(prefix=".build-", dir=binary_file(names[0], bare).parent.parent))
    try:
        command = [go, "build", "-trimpath", f"-ldflags={_version_ldflags(bare)}", "-o", f"{out}/"]
        _run([*command, *(f"k8s.io/kubernetes/cmd/{name}" for name in names)], cwd=src, log=log)
        for name in names:
            _install(out / name, binary_file(name, bare))
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _build_etcd(go: str, version: str, *, log: TextIO) -> None:
    bare = normalize_version(version)
    src = cache_root() / "src" / f"etcd-v{bare}"
    src.mkdir(parents=True, exist_ok=True)
    go_mod_file = src / "go.mod"
    if not go_mod_file.exists():
        go_mod_file.write_text(
            "// Generated by ops/upstreamkit/build.py to build etcd; not committed.\n"
            "module draplane.invalid/upstream/etcd\n\ngo 1.24\n\n"
            f"require go.etcd.io/etcd/server/v3 v{bare}\n"
        )
    destination = binary_file(ETCD, bare)
    destination.parent.mkdir(parents=True, exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix=".build-", dir=destination.parent.parent))
    try:
        _run(
            [go, "build", "-trimpath", "-ldflags=-s -w", "-o", str(out / ETCD), "go.etcd.io/etcd/server/v3"],
            cwd=src,
            log=log,
        )
        _install(out / ETCD, destination)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _steps(targets: Sequence[Target]) -> list[tuple[str, list[str]]]:
    """Groups consecutive kube-* targets of one version into one ``go build`` (one shared compile)."""
    steps: list[tuple[str, list[str]]] = []
    for name, version in targets:
        key = ETCD if name == ETCD else normalize_version(version)
        if name != ETCD and steps and steps[-1][0] == key and key != ETCD:
            steps[-1][1].append(name)
        else:
            steps.append((key, [name] if name != ETCD else [normalize_version(version)]))
    return steps


def build(targets: Sequence[Target] = DEFAULT_TARGETS, *, log: TextIO = sys.stderr) -> list[tuple[Target, str]]:
    """Builds the targets that are missing, in order; returns ``[((name, version), error), ...]`` for failures.

    Holds the build lock throughout: a concurrent caller waits, then finds
    the binaries in place and builds nothing. Idempotent.
    """
    go = go_binary()
    if go is None:
        return [(target, "Go is not installed") for target in missing(targets)]
    failures: list[tuple[Target, str]] = []
    with build_lock(wait=False) as free:
        if not free:
            log.write("upstream: another process is building (.build.lock); waiting for it\n")
            log.flush()
    with build_lock():
        todo = missing(targets)
        if not todo:
            log.write("upstream: every binary is cached\n")
            return []
        for key, names in _steps(todo):
            started = time.monotonic()
            what = f"etcd v{names[0]}" if key == ETCD else f"{', '.join(names)} v{key}"
            log.write(f"upstream: building {what}\n")
            log.flush()
            try:
                if key == ETCD:
                    _build_etcd(go, names[0], log=log)
                else:
                    _build_kube(go, key, names, log=log)
            except (BuildError, OSError) as error:
                log.write(f"upstream: FAILED {what}: {error}\n")
                failures += [((ETCD, names[0]) if key == ETCD else (name, key), str(error)) for name in names]
            else:
                log.write(f"upstream: built {what} in {time.monotonic() - started:.0f}s\n")
            log.flush()
    return failures
