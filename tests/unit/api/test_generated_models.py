"""The model modules are what `ops.gen_models` writes from Kubernetes' schemas today: nobody edited them by hand."""

from __future__ import annotations

import msgspec
import pytest

from ops import gen_models


@pytest.mark.parametrize("spec", gen_models.MODULES, ids=[m.module for m in gen_models.MODULES])
def test_generated_module_is_a_fresh_run(spec: gen_models.ModuleSpec) -> None:
    path = gen_models.TYPES_DIR / f"{spec.module}.py"
    assert path.read_text() == gen_models.render(spec), "stale: run `.venv/bin/python -m ops.gen_models --write`"


@pytest.mark.parametrize(
    ("wire", "attr"),
    [
        ("podCIDRs", "pod_cidrs"),
        ("hostIP", "host_ip"),
        ("setHostnameAsFQDN", "set_hostname_as_fqdn"),
        ("Port", "port"),  # DaemonEndpoint's Go JSON name
        ("continue", "continue_"),
        ("int", "int_value"),  # would shadow the annotation `int` in the class body
        ("apiVersion", "api_version"),
    ],
)
def test_attribute_names(wire: str, attr: str) -> None:
    assert gen_models.attr_name(wire) == attr


def test_hub_module_is_a_fresh_run() -> None:
    path = gen_models.TYPES_DIR / f"{gen_models.HUB.module}.py"
    assert path.read_text() == gen_models.render_hub(), "stale: run `.venv/bin/python -m ops.gen_models --write`"


def test_the_hub_adds_exactly_the_classic_fields_to_v1beta1() -> None:
    """What the generator derives from the two releases' schemas: the four 1.31 classic DRA fields, no more."""
    from services.api.types import resource_hub, resource_v1beta1

    added = {
        (name, f.encode_name)
        for name in resource_hub.__all__
        if name != "HUB_MODELS" and hasattr(resource_v1beta1, name)
        for f in msgspec.structs.fields(getattr(resource_hub, name))
        if f.encode_name not in {g.encode_name for g in msgspec.structs.fields(getattr(resource_v1beta1, name))}
    }
    assert added == {
        ("AllocationResult", "controller"),
        ("DeviceClassSpec", "suitableNodes"),
        ("ResourceClaimSpec", "controller"),
        ("ResourceClaimStatus", "deallocationRequested"),
    }
