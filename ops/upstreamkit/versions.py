"""Which upstream binaries draplane builds, at which versions, and where they are cached.

Pure constants and path arithmetic (standard library only), shared by the
build (`build`), the runners (`run`) and the tests that wait for them. The
cache layout is shared between worktrees and other tools rely on it::

    .cache/upstream/v1.31.14/{kube-apiserver,kube-scheduler,kube-controller-manager}
    .cache/upstream/v1.37.2/{...same}
    .cache/upstream/etcd/v3.6.16/etcd
    .cache/upstream/src/<version>/      throwaway Go modules the build generates
    .cache/upstream/logs/               build logs of ./ops/test's background build
"""

from __future__ import annotations

import os
from pathlib import Path

KUBE_VERSIONS = ("1.31.14", "1.37.2")
# The version the e2e test, the oracle suite and ops/test use.
DEFAULT_KUBE_VERSION = "1.31.14"
KUBE_COMPONENTS = ("kube-apiserver", "kube-scheduler", "kube-controller-manager")
ETCD = "etcd"
# etcd's server module as the Go module proxy serves it; kube-apiserver 1.31 and 1.37 speak its v3 API.
ETCD_VERSION = "3.6.16"
NAMES = (*KUBE_COMPONENTS, ETCD)

REPO = Path(__file__).resolve().parents[2]


def cache_root() -> Path:
    """``.cache/upstream`` of the repo (``DRAPLANE_UPSTREAM_CACHE`` overrides it)."""
    override = os.environ.get("DRAPLANE_UPSTREAM_CACHE")
    return Path(override) if override else REPO / ".cache" / "upstream"


def normalize_version(version: str) -> str:
    """``v1.31.14`` and ``1.31.14`` are the same version; the bare form is returned."""
    return version[1:] if version.startswith("v") else version


def binary_file(name: str, version: str | None = None) -> Path:
    """Where a binary lives in the cache, whether or not it is there.

    ``version`` is the Kubernetes version for the kube-* names and the etcd
    version for ``etcd`` (default: `DEFAULT_KUBE_VERSION` / `ETCD_VERSION`).
    """
    if name == ETCD:
        return cache_root() / "etcd" / f"v{normalize_version(version or ETCD_VERSION)}" / ETCD
    if name not in KUBE_COMPONENTS:
        raise ValueError(f"unknown upstream binary {name!r}; one of {', '.join(NAMES)}")
    return cache_root() / f"v{normalize_version(version or DEFAULT_KUBE_VERSION)}" / name
