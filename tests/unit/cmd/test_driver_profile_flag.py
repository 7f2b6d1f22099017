"""``draplane driver --driver-profile`` (default ``$DRIVER_PROFILE``): the whole profile in one word, as compose sets it.

The same spec as ``draplane up --driver-profile`` gives the same profile and
driver name; ``--driver`` still wins for the name; without it the separate
flags apply; a bad spec is a one-line error.
"""

from __future__ import annotations

import pytest

from services.cli import build_parser
from services.cmd.driver import PROFILE_ENV, options_from
from services.driver.profiles import DriverProfile, parse_profile_spec


def driver_options(*argv: str) -> tuple[str, DriverProfile]:
    options = options_from(build_parser().parse_args(["driver", "--node", "node-1", *argv]))
    return options.driver, options.profile


@pytest.mark.parametrize(
    ("argv", "env", "spec", "driver"),
    [
        (("--driver-profile", "gpu,partitions=4,shared"), None, "gpu,partitions=4,shared", "gpu.example.com"),
        ((), "gpu,binding-conditions", "gpu,binding-conditions", "gpu.example.com"),
        ((), "net", "net", "net.example.com"),
        (("--driver-profile", "gpu,partitions=2"), "net", "gpu,partitions=2", "gpu.example.com"),  # the flag wins
        (("--driver-profile", "gpu", "--driver", "other.example.com"), None, "gpu", "other.example.com"),
        (("--driver-profile", "gpu,driver=mine.example.com"), None, "gpu", "mine.example.com"),
    ],
)
def test_the_profile_spec_gives_up_s_profile(
    monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...], env: str | None, spec: str, driver: str
) -> None:
    if env is None:
        monkeypatch.delenv(PROFILE_ENV, raising=False)
    else:
        monkeypatch.setenv(PROFILE_ENV, env)
    assert driver_options(*argv) == (driver, parse_profile_spec(spec)[1])


def test_without_it_the_separate_flags_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    driver, profile = driver_options("--gpu-partitions", "4", "--binding-conditions")
    assert driver == "gpu.example.com"
    assert (profile.partitions, profile.binding_conditions) == (4, True)


def test_a_bad_spec_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    with pytest.raises(SystemExit, match=r"draplane driver: driver profile 'gpu,bogus': unknown option 'bogus'"):
        driver_options("--driver-profile", "gpu,bogus")
