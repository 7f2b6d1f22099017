"""ResourceClaim rules (Kubernetes 1.31 ValidateResourceClaim, ...Update and ...StatusUpdate)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest

from services.api.admission.validation import validate_create, validate_status_update, validate_update
from services.kube.cel import compile_check

from .objects import (
    BAD_NAME,
    CLAIM,
    LABEL_MSG,
    SUBDOMAIN_MSG,
    Obj,
    allocated_claim,
    allocation,
    claim,
    consumer,
    mutated,
    render,
)

Change = Callable[[Obj], Any]
R0 = "spec.devices.requests[0]"


def devices(o: Obj) -> Obj:
    return o["spec"]["devices"]


def request(o: Obj, i: int = 0) -> Obj:
    return devices(o)["requests"][i]


def set_request(**values: Any) -> Change:
    return lambda o: request(o).update(values)


def add_requests(n: int) -> Change:
    def change(o: Obj) -> None:
        devices(o)["requests"] = [{"name": f"r{i}", "deviceClassName": "gpu.example.com"} for i in range(n)]
        devices(o)["constraints"] = []
        devices(o)["config"] = []

    return change


def opaque(parameters: Any, driver: str = "gpu.example.com") -> Obj:
    return {"opaque": {"driver": driver, "parameters": parameters}}


CREATE_CASES: list[tuple[str, Change, list[str]]] = [
    ("valid", lambda o: None, []),
    ("no requests", lambda o: devices(o).update(requests=[], constraints=[], config=[]), []),
    ("32 requests", add_requests(32), []),
    ("33 requests", add_requests(33), ["spec.devices.requests: Too long: may not be longer than 32"]),
    (
        "bad request name",
        set_request(name=BAD_NAME),
        [
            f'{R0}.name: Invalid value: "{BAD_NAME}": {LABEL_MSG}',
            'spec.devices.constraints[0].requests[0]: Invalid value: "gpu": must be the name of a request in the claim',
            'spec.devices.config[0].requests[0]: Invalid value: "gpu": must be the name of a request in the claim',
        ],
    ),
    (
        "missing request name",
        lambda o: request(o).pop("name"),
        [
            f'{R0}.name: Invalid value: "": {LABEL_MSG}',
            'spec.devices.constraints[0].requests[0]: Invalid value: "gpu": must be the name of a request in the claim',
            'spec.devices.config[0].requests[0]: Invalid value: "gpu": must be the name of a request in the claim',
        ],
    ),
    (
        "duplicate request names",
        lambda o: devices(o)["requests"].append(dict(request(o))),
        ['spec.devices.requests[1].name: Duplicate value: "gpu"'],
    ),
    ("missing class", set_request(deviceClassName=""), [f"{R0}.deviceClassName: Required value"]),
    (
        "bad class",
        set_request(deviceClassName=BAD_NAME),
        [f'{R0}.deviceClassName: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
    ("mode defaults to ExactCount 1", lambda o: [request(o).pop(k) for k in ("allocationMode", "count")], []),
    ("ExactCount with omitted count", lambda o: request(o).pop("count"), []),
    ("ExactCount with zero count (defaulted to 1)", set_request(count=0), []),
    (
        "ExactCount with negative count",
        set_request(count=-1),
        [f"{R0}.count: Invalid value: -1: must be greater than zero"],
    ),
    ("All without count", lambda o: (request(o).pop("count"), request(o).update(allocationMode="All")), []),
    (
        "All with count",
        set_request(allocationMode="All", count=2),
        [f"{R0}.count: Invalid value: 2: must not be specified when allocationMode is 'All'"],
    ),
    (
        "unknown mode",
        set_request(allocationMode="Some"),
        [f'{R0}.allocationMode: Unsupported value: "Some": supported values: "All", "ExactCount"'],
    ),
    ("selector without cel", set_request(selectors=[{}]), [f"{R0}.selectors[0].cel: Required value"]),
    ("32 selectors", set_request(selectors=[{"cel": {"expression": "true"}}] * 32), []),
    (
        "33 selectors",
        set_request(selectors=[{"cel": {"expression": "true"}}] * 33),
        [f"{R0}.selectors: Too long: may not be longer than 32"],
    ),
    ("constraint without requests applies to all", lambda o: devices(o)["constraints"][0].pop("requests"), []),
    (
        "constraint names unknown request",
        lambda o: devices(o)["constraints"][0].update(requests=["gpu", "nic"]),
        ['spec.devices.constraints[0].requests[1]: Invalid value: "nic": must be the name of a request in the claim'],
    ),
    (
        "constraint request names a bad name",
        lambda o: devices(o)["constraints"][0].update(requests=[BAD_NAME]),
        [
            f'spec.devices.constraints[0].requests[0]: Invalid value: "{BAD_NAME}": {LABEL_MSG}',
            f'spec.devices.constraints[0].requests[0]: Invalid value: "{BAD_NAME}": must be the name of a request in '
            "the claim",
        ],
    ),
    (
        "constraint names a request twice",
        lambda o: devices(o)["constraints"][0].update(requests=["gpu", "gpu"]),
        ['spec.devices.constraints[0].requests[1]: Duplicate value: "gpu"'],
    ),
    (
        "constraint without matchAttribute",
        lambda o: devices(o)["constraints"][0].pop("matchAttribute"),
        ["spec.devices.constraints[0].matchAttribute: Required value"],
    ),
    (
        "matchAttribute without domain",
        lambda o: devices(o)["constraints"][0].update(matchAttribute="numa"),
        ["spec.devices.constraints[0].matchAttribute.domain: Required value: must include a prefix"],
    ),
    (
        "matchAttribute with bad identifier",
        lambda o: devices(o)["constraints"][0].update(matchAttribute="dra.example.com/1x"),
        [
            'spec.devices.constraints[0].matchAttribute: Invalid value: "1x": a valid C identifier must start with '
            "alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or "
            "'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')",
        ],
    ),
    (
        "33 constraints",
        lambda o: devices(o).update(constraints=[{"matchAttribute": "a.b/c"}] * 33),
        ["spec.devices.constraints: Too long: may not be longer than 32"],
    ),
    ("config for all requests", lambda o: devices(o)["config"][0].pop("requests"), []),
    (
        "config names unknown request",
        lambda o: devices(o)["config"][0].update(requests=["nic"]),
        ['spec.devices.config[0].requests[0]: Invalid value: "nic": must be the name of a request in the claim'],
    ),
    (
        "config names a request twice",
        lambda o: devices(o)["config"][0].update(requests=["gpu", "gpu"]),
        ['spec.devices.config[0].requests[1]: Duplicate value: "gpu"'],
    ),
    (
        "config without opaque",
        lambda o: devices(o).update(config=[{}]),
        ["spec.devices.config[0].opaque: Required value"],
    ),
    (
        "33 configs",
        lambda o: devices(o).update(config=[opaque({})] * 33),
        ["spec.devices.config: Too long: may not be longer than 32"],
    ),
    (
        "bad config parameters",
        lambda o: devices(o).update(
            config=[opaque(None), opaque("hello-world"), opaque([1]), {"opaque": {"driver": "a.b"}}]
        ),
        [
            "spec.devices.config[0].opaque.parameters: Required value",
            'spec.devices.config[1].opaque.parameters: Invalid value: "<value omitted>": parameters must be a valid '
            "JSON object",
            'spec.devices.config[2].opaque.parameters: Invalid value: "<value omitted>": parameters must be a valid '
            "JSON object",
            "spec.devices.config[3].opaque.parameters: Required value",
        ],
    ),
    (
        "empty config driver",
        lambda o: devices(o).update(config=[opaque({}, driver="")]),
        [
            "spec.devices.config[0].opaque.driver: Required value",
            f'spec.devices.config[0].opaque.driver: Invalid value: "": {SUBDOMAIN_MSG}',
        ],
    ),
    (
        "config driver is case-insensitive",
        lambda o: devices(o).update(config=[opaque({}, driver="GPU.Example.com")]),
        [],
    ),
    (
        "config driver too long",
        lambda o: devices(o).update(config=[opaque({}, driver="a" * 64)]),
        ["spec.devices.config[0].opaque.driver: Too long: must have at most 63 bytes"],
    ),
    ("classic controller", lambda o: o["spec"].update(controller="dra.example.com"), []),
    (
        "bad classic controller",
        lambda o: o["spec"].update(controller=BAD_NAME),
        [f'spec.controller: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in CREATE_CASES], ids=[c[0] for c in CREATE_CASES])
def test_create(change: Change, expected: list[str]) -> None:
    assert render(validate_create(CLAIM, mutated(claim(), change))) == expected


def test_cel_compile_errors_are_reported_on_the_expression() -> None:
    bad = "device.attributes[true].someBoolean"
    obj = mutated(
        claim(), set_request(selectors=[{"cel": {"expression": 'device.driver == "x"'}}, {"cel": {"expression": bad}}])
    )
    detail = compile_check(bad)
    assert detail is not None and detail.startswith(
        "compilation failed: ERROR: <input>:1:18: found no matching overload for '_[_]' applied to"
    )
    assert render(validate_create(CLAIM, obj)) == [
        f'{R0}.selectors[1].cel.expression: Invalid value: "{bad}": {detail}'
    ]


def test_cel_must_return_bool() -> None:
    obj = mutated(claim(), set_request(selectors=[{"cel": {"expression": "1"}}]))
    assert render(validate_create(CLAIM, obj)) == [
        f'{R0}.selectors[0].cel.expression: Invalid value: "1": must evaluate to bool or the unknown type, not int'
    ]


# --- update -------------------------------------------------------------------------


def test_update_without_changes() -> None:
    old = claim()
    assert validate_update(CLAIM, mutated(old, lambda o: None), old) == []


def test_update_spec_is_immutable() -> None:
    old = claim()
    new = mutated(old, set_request(deviceClassName="gpu.example.com2"))
    assert render(validate_update(CLAIM, new, old)) == [
        f"spec: Invalid value: {_json(new['spec'])}: field is immutable"
    ]


def test_update_spec_equal_after_defaulting_is_not_a_change() -> None:
    old = claim()
    new = mutated(old, lambda o: devices(o).update(extra=None) or request(o).update(adminAccess=False))
    assert validate_update(CLAIM, new, old) == []


def test_update_does_not_recompile_stored_selectors() -> None:
    # A stored expression is trusted even if it would not compile today.
    old = mutated(claim(), set_request(selectors=[{"cel": {"expression": "1"}}]))
    assert validate_update(CLAIM, mutated(old, lambda o: None), old) == []


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


# --- status ---------------------------------------------------------------------------

STATUS = "status"


def status(**values: Any) -> Change:
    return lambda o: o[STATUS].update(values)


def reserve(n: int, start: int = 0) -> Change:
    return lambda o: o[STATUS].update(reservedFor=[consumer(i) for i in range(start, start + n)])


def deleting(o: Obj) -> None:
    o["metadata"]["deletionTimestamp"] = "2024-08-13T11:00:00Z"


def deleted_with_two_reservations() -> Obj:
    obj = allocated_claim()
    deleting(obj)
    reserve(2)(obj)
    return obj


STATUS_CASES: list[tuple[str, Callable[[], Obj], Change, list[str]]] = [
    ("no-op", claim, lambda o: None, []),
    ("add empty allocation", claim, status(allocation={}), []),
    ("add allocation", claim, status(allocation=allocation()), []),
    ("add allocation and reservations", claim, lambda o: (status(allocation=allocation())(o), reserve(32)(o)), []),
    ("add reservations", allocated_claim, reserve(32), []),
    (
        "bad result request",
        claim,
        status(
            allocation={"devices": {"results": [{"request": BAD_NAME, "driver": "a.b", "pool": "p", "device": "d"}]}}
        ),
        [
            f'status.allocation.devices.results[0].request: Invalid value: "{BAD_NAME}": {LABEL_MSG}',
            f'status.allocation.devices.results[0].request: Invalid value: "{BAD_NAME}": must be the name of a '
            "request in the claim",
        ],
    ),
    (
        "bad result names",
        claim,
        status(
            allocation={
                "devices": {"results": [{"request": "gpu", "driver": "", "pool": "a/" + BAD_NAME, "device": "Gpu"}]}
            }
        ),
        [
            "status.allocation.devices.results[0].driver: Required value",
            f'status.allocation.devices.results[0].driver: Invalid value: "": {SUBDOMAIN_MSG}',
            f'status.allocation.devices.results[0].pool: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}',
            f'status.allocation.devices.results[0].device: Invalid value: "Gpu": {LABEL_MSG}',
        ],
    ),
    (
        "missing result pool",
        claim,
        status(allocation={"devices": {"results": [{"request": "gpu", "driver": "a.b", "pool": "", "device": "d"}]}}),
        ["status.allocation.devices.results[0].pool: Required value"],
    ),
    (
        "pool name too long",
        claim,
        status(
            allocation={
                "devices": {"results": [{"request": "gpu", "driver": "a.b", "pool": "x/" * 126 + "xy", "device": "d"}]}
            }
        ),
        ["status.allocation.devices.results[0].pool: Too long: may not be longer than 253"],
    ),
    (
        "33 results",
        claim,
        status(
            allocation={
                "devices": {
                    "results": [{"request": "gpu", "driver": "a.b", "pool": "p", "device": f"d{i}"} for i in range(33)]
                }
            }
        ),
        ["status.allocation.devices.results: Too long: may not be longer than 32"],
    ),
    (
        "bad allocation config",
        claim,
        status(
            allocation={
                "devices": {
                    "config": [
                        {"requests": ["gpu", BAD_NAME], "opaque": {"driver": "a.b", "parameters": {}}},
                        {"source": "FromSomewhere", "opaque": {"driver": "a.b", "parameters": {}}},
                        {"source": "FromClass"},
                    ]
                }
            }
        ),
        [
            "status.allocation.devices.config[0].source: Required value",
            f'status.allocation.devices.config[0].requests[1]: Invalid value: "{BAD_NAME}": {LABEL_MSG}',
            f'status.allocation.devices.config[0].requests[1]: Invalid value: "{BAD_NAME}": must be the name of a '
            "request in the claim",
            'status.allocation.devices.config[1].source: Unsupported value: "FromSomewhere": supported values: '
            '"FromClaim", "FromClass"',
            "status.allocation.devices.config[2].opaque: Required value",
        ],
    ),
    (
        "64 allocation configs",
        claim,
        status(
            allocation={
                "devices": {"config": [{"source": "FromClass", "opaque": {"driver": "a.b", "parameters": {}}}] * 64}
            }
        ),
        [],
    ),
    (
        "65 allocation configs",
        claim,
        status(
            allocation={
                "devices": {"config": [{"source": "FromClass", "opaque": {"driver": "a.b", "parameters": {}}}] * 65}
            }
        ),
        ["status.allocation.devices.config: Too long: may not be longer than 64"],
    ),
    (
        "empty node selector",
        claim,
        status(allocation={"nodeSelector": {}}),
        ["status.allocation.nodeSelector.nodeSelectorTerms: Required value: must have at least one node selector term"],
    ),
    ("allocation controller", claim, status(allocation={"controller": "dra.example.com"}), []),
    (
        "bad allocation controller",
        claim,
        status(allocation={"controller": BAD_NAME}),
        [f'status.allocation.controller: Invalid value: "{BAD_NAME}": {SUBDOMAIN_MSG}'],
    ),
    ("33 reservations", allocated_claim, reserve(33), ["status.reservedFor: Too long: may not be longer than 32"]),
    (
        "duplicate reservation uid",
        allocated_claim,
        status(reservedFor=[consumer(1), {**consumer(2), "uid": "uid-1"}]),
        ['status.reservedFor[1].uid: Duplicate value: "uid-1"'],
    ),
    (
        "reservation without allocation",
        claim,
        reserve(1),
        ["status.reservedFor: Forbidden: may not be specified when `allocated` is not set"],
    ),
    (
        "incomplete reservation",
        allocated_claim,
        status(reservedFor=[{}]),
        [
            "status.reservedFor[0].resource: Required value",
            "status.reservedFor[0].name: Required value",
            "status.reservedFor[0].uid: Required value",
        ],
    ),
    (
        "new reservation while deleted",
        lambda: mutated(allocated_claim(), deleting),
        reserve(1),
        [
            "status.reservedFor: Forbidden: new entries may not be added while `deallocationRequested` or "
            "`deletionTimestamp` are set"
        ],
    ),
    (
        "keep and drop reservations while deleted",
        deleted_with_two_reservations,
        reserve(1),
        [],
    ),
    (
        "new reservation while deallocation requested",
        lambda: mutated(allocated_claim(), status(deallocationRequested=True)),
        reserve(1),
        [
            "status.reservedFor: Forbidden: new entries may not be added while `deallocationRequested` or "
            "`deletionTimestamp` are set"
        ],
    ),
    ("request deallocation", allocated_claim, status(deallocationRequested=True), []),
    (
        "deallocate",
        lambda: mutated(allocated_claim(), status(deallocationRequested=True)),
        lambda o: o[STATUS].update(deallocationRequested=False, allocation=None),
        [],
    ),
    ("remove allocation", allocated_claim, lambda o: o[STATUS].pop("allocation"), []),
    (
        "clear deallocationRequested while allocated",
        lambda: mutated(allocated_claim(), status(deallocationRequested=True)),
        status(deallocationRequested=False),
        ["status.deallocationRequested: Forbidden: may not be cleared when `allocation` is set"],
    ),
    (
        "request deallocation while reserved",
        lambda: mutated(allocated_claim(), reserve(1)),
        status(deallocationRequested=True),
        ["status.deallocationRequested: Forbidden: deallocation cannot be requested while `reservedFor` is set"],
    ),
    (
        "request deallocation without allocation",
        claim,
        status(deallocationRequested=True),
        ["status: Forbidden: `allocation` must be set when `deallocationRequested` is set"],
    ),
    (
        "remove allocation but keep deallocationRequested",
        lambda: mutated(allocated_claim(), status(deallocationRequested=True)),
        lambda o: o[STATUS].pop("allocation"),
        ["status: Forbidden: `allocation` must be set when `deallocationRequested` is set"],
    ),
]


@pytest.mark.parametrize(
    ("old_factory", "change", "expected"), [c[1:] for c in STATUS_CASES], ids=[c[0] for c in STATUS_CASES]
)
def test_status_update(old_factory: Callable[[], Obj], change: Change, expected: list[str]) -> None:
    old = old_factory()
    assert render(validate_status_update(CLAIM, mutated(old, change), old)) == expected


def test_allocation_is_immutable() -> None:
    old = allocated_claim()
    new = mutated(old, lambda o: o[STATUS]["allocation"]["devices"]["results"][0].update(driver="gpu.example.com-2"))
    assert render(validate_status_update(CLAIM, new, old)) == [
        f"status.allocation: Invalid value: {_json(new[STATUS]['allocation'])}: field is immutable"
    ]
