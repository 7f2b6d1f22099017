"""CDI specs for prepared claims: names, qualified device ids and file contents, as dra-example-driver writes them.

Why this module exists: a container runtime learns which devices and
environment a container gets from Container Device Interface spec files. A
driver writes one transient spec per prepared claim and one "common" spec
for what every container with one of its devices gets; the node agent hands
the qualified device ids (``k8s.gpu.example.com/gpu=<claimUID>-gpu-0``) to the
runtime. Vendor ``k8s.<driver>``, class ``gpu``, device names
``<claimUID>-<device>`` and the file names follow dra-example-driver and the
CDI library (``<vendor>-<class>_<transientID>.yaml``). Everything here is
pure; `services.driver.cdi_files` writes the files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

CDI_VERSION = "0.3.0"  # the lowest CDI spec version that can express env-only container edits
CDI_CLASS = "gpu"
COMMON_DEVICE = "common"
SPEC_EXTENSION = ".yaml"  # the CDI library's default encoding


def vendor(driver: str) -> str:
    return f"k8s.{driver}"


def kind(driver: str) -> str:
    """``k8s.gpu.example.com/gpu``."""
    return f"{vendor(driver)}/{CDI_CLASS}"


def qualified_name(driver: str, device: str) -> str:
    """The id a runtime is given: ``<vendor>/<class>=<device>``."""
    return f"{kind(driver)}={device}"


def claim_device_name(claim_uid: str, device: str) -> str:
    """The CDI device of one allocated device of a claim: ``<claimUID>-<device>``."""
    return f"{claim_uid}-{device}"


def transient_spec_name(driver: str, transient_id: str) -> str:
    """``GenerateTransientSpecName`` plus the default extension."""
    return f"{vendor(driver)}-{CDI_CLASS}_{transient_id.replace('/', '_')}{SPEC_EXTENSION}"


def claim_spec_file(driver: str, claim_uid: str) -> str:
    return transient_spec_name(driver, claim_uid)


def common_spec_file(driver: str) -> str:
    return transient_spec_name(driver, COMMON_DEVICE)


def claim_cdi_ids(driver: str, claim_uid: str, device: str) -> list[str]:
    """``GetClaimDevices`` for one device: the claim's device, then the common device.

    dra-example-driver lists the common device first; draplane lists the
    claim's own device first because kubelet 1.37 names a device in
    ``allocatedResourcesStatus`` by its first CDI id, which then says which
    device it is rather than ``...=common`` for every device.
    """
    return [qualified_name(driver, claim_device_name(claim_uid, device)), qualified_name(driver, COMMON_DEVICE)]


def common_spec(*, driver: str, node: str) -> dict[str, Any]:
    """The spec every container with one of this driver's devices gets."""
    return {
        "cdiVersion": CDI_VERSION,
        "kind": kind(driver),
        "devices": [
            {
                "name": COMMON_DEVICE,
                "containerEdits": {
                    "env": [f"KUBERNETES_NODE_NAME={node}", f"DRA_RESOURCE_DRIVER_NAME={driver}"],
                },
            }
        ],
    }


def claim_spec(*, driver: str, claim_uid: str, devices: Sequence[tuple[str, Sequence[str]]]) -> dict[str, Any]:
    """The transient spec of a claim: one CDI device per allocated device, with its environment."""
    return {
        "cdiVersion": CDI_VERSION,
        "kind": kind(driver),
        "devices": [
            {"name": claim_device_name(claim_uid, device), "containerEdits": {"env": list(env)}}
            for device, env in devices
        ],
    }


def render(spec: dict[str, Any]) -> str:
    """A spec as the YAML text of its file."""
    return yaml.safe_dump(spec, sort_keys=False, default_flow_style=False)
