"""The model modules are what `ops.gen_models` writes from Kubernetes' schemas today: nobody edited them by hand."""

from __future__ import annotations

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
