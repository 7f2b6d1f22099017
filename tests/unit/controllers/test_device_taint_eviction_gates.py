"""The device-taint-eviction controller runs with DRADeviceTaints, and watches rules with DRADeviceTaintRules too.

1.37's defaults have both on (GA); at ``--emulated-version=1.31`` the gates
do not exist yet and the controller-manager does not start the controller,
as kube-controller-manager 1.31 had none.
"""

from __future__ import annotations

import pytest

from services.controllers import device_taint_eviction
from services.kube.feature_gates import FeatureGates
from services.runtime.informer import Informer


@pytest.mark.parametrize(
    ("gates", "runs", "rules"),
    [
        (FeatureGates(), True, True),
        (FeatureGates(release="1.37"), True, True),
        (FeatureGates(release="1.31"), False, False),
        (FeatureGates.from_map({"DRADeviceTaintRules": False}), True, False),
        (FeatureGates.from_map({"DRADeviceTaints": False, "DRADeviceTaintRules": False}), False, False),
        (None, True, True),  # no gates given: the project defaults (1.37)
    ],
)
def test_gates(gates: FeatureGates | None, runs: bool, rules: bool) -> None:
    assert device_taint_eviction.enabled(gates) is runs
    assert device_taint_eviction.rules_enabled(gates) is rules


async def test_controller_watches_rules_only_with_their_gate() -> None:
    class _NoBus:
        pass

    informer = Informer(_NoBus(), name="gates")  # type: ignore[arg-type]
    on = device_taint_eviction.DeviceTaintEvictionController(informer, None, gates=FeatureGates())  # type: ignore[arg-type]
    off = device_taint_eviction.DeviceTaintEvictionController(
        informer,
        None,  # type: ignore[arg-type]
        gates=FeatureGates.from_map({"DRADeviceTaintRules": False}),
    )
    assert on.watch_rules and not off.watch_rules
