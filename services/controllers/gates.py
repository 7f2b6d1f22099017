"""Reading feature gates from whatever the caller has.

Why this module exists: the controllers honour gates (``DRAAdminAccess`` for
templates) and accept either the API's `FeatureGates` (anything with
``enabled(name)``) or a plain mapping of gate names to booleans (tests, the
CLI). A gate that is not set takes the project default from
`services.kube.feature_gates.KNOWN_FEATURES`, so every component agrees on
defaults: the default release's (1.37: ``DRAAdminAccess`` is GA and on; a
`FeatureGates` at ``--emulated-version=1.31`` has it off, as Kubernetes 1.32 did).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from services.kube.feature_gates import KNOWN_FEATURES


@runtime_checkable
class GateReader(Protocol):
    def enabled(self, name: str) -> bool: ...


Gates = GateReader | Mapping[str, bool] | None


def default_of(name: str) -> bool:
    spec = KNOWN_FEATURES.get(name)
    return spec.default if spec is not None else False


def gate_enabled(gates: Gates, name: str) -> bool:
    """Whether gate ``name`` is on; its default when ``gates`` does not set it."""
    if gates is None:
        return default_of(name)
    if isinstance(gates, Mapping):
        return bool(gates.get(name, default_of(name)))
    try:
        return bool(gates.enabled(name))
    except (KeyError, ValueError, LookupError):
        return default_of(name)
