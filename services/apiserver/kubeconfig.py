"""A kubeconfig for people and tools to reach this apiserver.

``draplane up`` writes one to ``<data>/kubeconfig`` so that
``KUBECONFIG=<data>/kubeconfig kubectl get pods`` works with no flags: one
cluster (the server URL and, with TLS, its CA), one user (a bearer token, or
none when anonymous access is on) and one current context.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import yaml


def kubeconfig(
    server: str,
    *,
    token: str | None = None,
    ca_file: str | Path | None = None,
    insecure_skip_tls_verify: bool = False,
    name: str = "draplane",
    namespace: str | None = None,
) -> dict[str, Any]:
    """The kubeconfig document for ``server`` (``http://127.0.0.1:8080``)."""
    cluster: dict[str, Any] = {"server": server}
    if ca_file is not None:
        cluster["certificate-authority-data"] = base64.b64encode(Path(ca_file).read_bytes()).decode()
    elif insecure_skip_tls_verify:
        cluster["insecure-skip-tls-verify"] = True
    user: dict[str, Any] = {"token": token} if token else {}
    context: dict[str, Any] = {"cluster": name, "user": name}
    if namespace:
        context["namespace"] = namespace
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": context}],
        "current-context": name,
        "preferences": {},
    }


def write_kubeconfig(path: str | Path, server: str, **kwargs: Any) -> Path:
    """Write the kubeconfig readable by its owner only (it may hold a token)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(kubeconfig(server, **kwargs), sort_keys=False)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    return path
