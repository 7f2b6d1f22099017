"""GpuConfig decoding, defaults, validation, and which config applies to a request."""

from __future__ import annotations

from typing import Any

import pytest

from services.driver.config import (
    API_VERSION,
    ConfigError,
    GpuConfig,
    GpuSharing,
    SpacePartitioningConfig,
    TimeSlicingConfig,
    config_for_request,
    decode_gpu_config,
    default_gpu_config,
    normalize,
    opaque_configs,
    validate,
)

DRIVER = "gpu.example.com"


def params(sharing: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "GpuConfig"}
    if sharing is not None:
        body["sharing"] = sharing
    return body


def ts(interval: str) -> dict[str, Any]:
    return params({"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": interval}})


def sp(count: int) -> dict[str, Any]:
    return params({"strategy": "SpacePartitioning", "spacePartitioningConfig": {"partitionCount": count}})


def entry(source: str, parameters: Any, requests: list[str] | None = None, driver: str = DRIVER) -> dict[str, Any]:
    e: dict[str, Any] = {"source": source, "opaque": {"driver": driver, "parameters": parameters}}
    if requests is not None:
        e["requests"] = requests
    return e


def test_decode_time_slicing_and_space_partitioning() -> None:
    assert decode_gpu_config(ts("Long")) == GpuConfig(GpuSharing("TimeSlicing", TimeSlicingConfig("Long")))
    assert decode_gpu_config(sp(10)) == GpuConfig(
        GpuSharing("SpacePartitioning", space_partitioning=SpacePartitioningConfig(10))
    )
    assert decode_gpu_config(b'{"apiVersion": "gpu.resource.example.com/v1alpha1", "kind": "GpuConfig"}') == GpuConfig()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"apiVersion": API_VERSION}, "Object 'Kind' is missing"),
        ({"apiVersion": "gpu.resource.example.com/v1", "kind": "GpuConfig"}, 'no kind "GpuConfig" is registered'),
        ({**params(), "extra": 1}, 'strict decoding error: unknown field "extra"'),
        (params({"strategy": "TimeSlicing", "bogus": {}}), 'unknown field "sharing.bogus"'),
        (params({"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": 5}}), "of type string"),
        (params({"strategy": "SpacePartitioning", "spacePartitioningConfig": {"partitionCount": "2"}}), "of type int"),
        ("not json", "json parse error"),
    ],
)
def test_decoding_is_strict(raw: Any, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        decode_gpu_config(raw)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("config", "normalized"),
    [
        (GpuConfig(), GpuConfig(GpuSharing("TimeSlicing", TimeSlicingConfig("Default")))),
        (GpuConfig(GpuSharing("TimeSlicing")), GpuConfig(GpuSharing("TimeSlicing", TimeSlicingConfig("Default")))),
        (
            GpuConfig(GpuSharing("SpacePartitioning")),
            GpuConfig(GpuSharing("SpacePartitioning", space_partitioning=SpacePartitioningConfig(1))),
        ),
        (decode_gpu_config(ts("Short")), decode_gpu_config(ts("Short"))),
    ],
)
def test_normalize_fills_in_implied_defaults(config: GpuConfig, normalized: GpuConfig) -> None:
    assert normalize(config) == normalized


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (GpuConfig(), "no sharing strategy set"),
        (GpuConfig(GpuSharing("Exclusive")), "unknown GPU sharing strategy: Exclusive"),
        (normalize(decode_gpu_config(ts("Forever"))), "unknown time-slice interval: Forever"),
        (normalize(decode_gpu_config(params({"strategy": "TimeSlicing", "timeSlicingConfig": {}}))), "interval: "),
        (normalize(decode_gpu_config(sp(-1))), "invalid partition count: -1"),
    ],
)
def test_validation_messages(config: GpuConfig, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        validate(config)
    assert message in str(err.value)


def test_valid_configs_pass() -> None:
    for raw in (ts("Default"), ts("Medium"), sp(0), sp(7)):
        validate(normalize(decode_gpu_config(raw)))
    validate(default_gpu_config())


def configs(*entries: dict[str, Any]) -> Any:
    return opaque_configs(DRIVER, list(entries))


@pytest.mark.parametrize(
    ("entries", "request_name", "expected"),
    [
        # nothing configured: the default
        ([], "gpu", default_gpu_config()),
        # the claim's config wins over the class's, whatever the order in the allocation
        ([entry("FromClaim", ts("Long")), entry("FromClass", ts("Short"))], "gpu", decode_gpu_config(ts("Long"))),
        ([entry("FromClass", ts("Short")), entry("FromClaim", ts("Long"))], "gpu", decode_gpu_config(ts("Long"))),
        # later entries of the same source win
        ([entry("FromClaim", ts("Short")), entry("FromClaim", sp(3))], "gpu", decode_gpu_config(sp(3))),
        # `requests` limits an entry to those requests
        (
            [entry("FromClaim", ts("Long"), ["ts-gpu"]), entry("FromClaim", sp(10), ["sp-gpu"])],
            "ts-gpu",
            decode_gpu_config(ts("Long")),
        ),
        (
            [entry("FromClaim", ts("Long"), ["ts-gpu"]), entry("FromClaim", sp(10), ["sp-gpu"])],
            "sp-gpu",
            decode_gpu_config(sp(10)),
        ),
        ([entry("FromClaim", ts("Long"), ["ts-gpu"])], "other", default_gpu_config()),
        # a class config for all requests still applies where no claim config matches
        ([entry("FromClass", sp(2)), entry("FromClaim", ts("Long"), ["a"])], "b", decode_gpu_config(sp(2))),
        # configs for other drivers are skipped, not errors
        ([entry("FromClaim", {"whatever": True}, driver="net.example.com")], "gpu", default_gpu_config()),
    ],
)
def test_which_config_applies(entries: list[dict[str, Any]], request_name: str, expected: GpuConfig) -> None:
    assert config_for_request(configs(*entries), request_name) == expected


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"source": "FromNowhere", "opaque": {"driver": DRIVER, "parameters": ts("Long")}}, "invalid config source"),
        ({"source": "FromClaim"}, "only opaque parameters are supported by this driver"),
        (entry("FromClaim", {"kind": "GpuConfig", "apiVersion": "x/v1"}), "error decoding config parameters"),
    ],
)
def test_bad_allocation_configs(bad: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        configs(bad)
    assert message in str(err.value)
