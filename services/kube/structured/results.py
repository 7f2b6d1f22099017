"""The wire-form ``AllocationResult`` of one claim.

Given the devices picked for a claim, this assembles what the scheduler
writes to ``status.allocation``: ``devices.results`` (request, driver, pool,
device), ``devices.config`` (first the configuration of every DeviceClass the
requests used, ``source: FromClass``, restricted to the requests of that
class, then the claim's own, ``source: FromClaim``) and the ``nodeSelector``
that says where the allocation is usable (``createNodeSelector`` in
``k8s.io/dynamic-resource-allocation/structured/allocator.go``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from services.kube.node_selectors import merge_requirements, node_name_selector


class ResultError(ValueError):
    """The allocation result cannot be expressed (an unsupported slice node selector)."""


def _device_configuration(config: Mapping[str, Any]) -> dict[str, Any]:
    # DeviceConfiguration is inlined next to ``requests``; keep whatever
    # configuration type it carries (opaque today).
    # Results must not share mutable parts with the class or claim.
    return {k: copy.deepcopy(v) for k, v in config.items() if k != "requests"}


def class_and_claim_configs(
    *,
    requests: Sequence[tuple[str, Mapping[str, Any]]],
    claim_configs: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """``devices.config``: class configs once per class, then the claim's configs.

    ``requests`` is (request name, DeviceClass) in request order.
    """
    configs: list[dict[str, Any]] = []
    class_ranges: dict[str, range] = {}
    for request_name, device_class in requests:
        class_name = str((device_class.get("metadata") or {}).get("name", ""))
        existing = class_ranges.get(class_name)
        if existing is not None:
            for i in existing:
                configs[i]["requests"].append(request_name)
            continue
        start = len(configs)
        for config in (device_class.get("spec") or {}).get("config") or ():
            entry: dict[str, Any] = {"source": "FromClass", "requests": [request_name]}
            entry.update(_device_configuration(config))
            configs.append(entry)
        class_ranges[class_name] = range(start, len(configs))
    for config in claim_configs:
        entry = {"source": "FromClaim"}
        if config.get("requests"):
            entry["requests"] = list(config["requests"])
        entry.update(_device_configuration(config))
        configs.append(entry)
    return configs


def node_selector_for(
    slices: Sequence[Mapping[str, Any]],
    *,
    devices: Sequence[Mapping[str, Any]] | None = None,
    node: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Where an allocation from these slices is usable; None means everywhere.

    With ``devices`` (1.37, one per slice), a ``perDeviceNodeSelection``
    slice's device says where it is, and a device with a node name or
    ``bindsToNode`` pins the allocation to ``node``, the node allocated for.
    """
    match_fields: list[dict[str, Any]] = []
    match_expressions: list[dict[str, Any]] = []
    for i, slice_ in enumerate(slices):
        spec = slice_.get("spec") or {}
        where: Mapping[str, Any] = spec
        if devices is not None:
            basic = devices[i].get("basic") or {}
            if spec.get("perDeviceNodeSelection"):
                where = basic
            if where.get("nodeName") or basic.get("bindsToNode"):
                return node_name_selector(str(((node or {}).get("metadata") or {}).get("name", "")))
        node_name = where.get("nodeName")
        if node_name:
            # One node-local device restricts the allocation to that node.
            return node_name_selector(str(node_name))
        selector = where.get("nodeSelector")
        if selector is None:
            continue
        terms = selector.get("nodeSelectorTerms") or []
        if len(terms) == 1:
            merge_requirements(match_fields, terms[0].get("matchFields") or ())
            merge_requirements(match_expressions, terms[0].get("matchExpressions") or ())
        elif len(terms) > 1:
            raise ResultError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
    if not match_fields and not match_expressions:
        return None
    term: dict[str, Any] = {}
    if match_expressions:
        term["matchExpressions"] = match_expressions
    if match_fields:
        term["matchFields"] = match_fields
    return {"nodeSelectorTerms": [term]}


def allocation_result(
    *,
    results: Sequence[Mapping[str, Any]],
    configs: Sequence[Mapping[str, Any]],
    node_selector: Mapping[str, Any] | None,
) -> dict[str, Any]:
    devices: dict[str, Any] = {"results": list(results)}
    if configs:
        devices["config"] = list(configs)
    result: dict[str, Any] = {"devices": devices}
    if node_selector is not None:
        result["nodeSelector"] = node_selector
    return result
