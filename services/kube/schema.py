"""Group/version strings (k8s.io/apimachinery/pkg/runtime/schema, 1.31).

``apiVersion`` is ``<group>/<version>`` or, for the core group, ``<version>``.
Validation of owner references and server-side apply both split it.
"""

from __future__ import annotations


def parse_group_version(api_version: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: (group, version), or None where Go returns an error (two or more '/')."""
    if not api_version or api_version == "/":
        return "", ""
    group, slash, version = api_version.partition("/")
    if not slash:
        return "", api_version
    if "/" in version:
        return None
    return group, version
