"""``draplane scheduler --binding-timeout-seconds``: DynamicResourcesArgs' bindingTimeout, validated as kube-scheduler does.

kube-scheduler's ValidateDynamicResourcesArgs: at least 1 second, and setting
it at all is an error when DRADeviceBindingConditions is off (as at 1.31).
"""

from __future__ import annotations

import pytest

from services.cli import build_parser
from services.cmd.scheduler import config_from
from services.scheduler.service import SchedulerConfig


def config(*flags: str) -> SchedulerConfig:
    return config_from(build_parser().parse_args(["scheduler", *flags]))


def test_unset_is_the_default_600_seconds() -> None:
    assert config().binding_timeout is None


def test_a_short_timeout_is_taken() -> None:
    assert config("--binding-timeout-seconds", "1").binding_timeout == 1.0


def test_less_than_a_second_is_refused() -> None:
    with pytest.raises(SystemExit, match=r'bindingTimeout: Invalid value: "0\.5s": must be at least 1 second'):
        config("--binding-timeout-seconds", "0.5")


def test_with_the_gate_off_setting_it_is_refused() -> None:
    with pytest.raises(SystemExit, match="bindingTimeout: Forbidden: DRADeviceBindingConditions or"):
        config("--emulated-version", "1.31", "--binding-timeout-seconds", "5")
    with pytest.raises(SystemExit, match="feature gate is disabled"):
        config("--feature-gates", "DRADeviceBindingConditions=false", "--binding-timeout-seconds", "5")
