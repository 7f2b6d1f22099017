"""Device selectors: each one is a CEL expression that must compile to bool.

Requests and DeviceClasses hold up to 32 selectors. Expressions are compiled
(`services.kube.cel.compile_check`) when they are new; expressions already
stored are trusted, as Kubernetes does with its "stored expressions"
environment, so a stored object never becomes invalid because the CEL
library changed and unchanged updates cost no compilation.

Kubernetes 1.37 (``limits=LIMITS_1_37``) first rejects an expression longer
than 10Ki bytes (``Too long: may not be more than 10240 bytes``, not compiled),
then one that compiles but whose estimated worst-case cost exceeds 1,000,000
(``Forbidden: too complex, exceeds cost limit``; the estimate is
`services.kube.cel.estimate_cost`), and caps selectors per list with its
``Too many`` wording. 1.31 estimated no cost.
"""

from __future__ import annotations

from typing import Any

from services.api.admission.validation.access import text
from services.api.admission.validation.lists import validate_slice
from services.api.machinery.field_errors import FieldError, forbidden, invalid, required, too_long_bytes
from services.kube.cel import compile_check, estimate_cost
from services.kube.resource_limits import (
    CEL_SELECTOR_EXPRESSION_MAX_COST,
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    DEVICE_SELECTORS_MAX_SIZE,
    LIMITS_1_31,
    ResourceLimits,
)


def validate_selector(
    selector: Any, path: str, *, stored: bool, limits: ResourceLimits = LIMITS_1_31
) -> list[FieldError]:
    cel = selector.get("cel") if isinstance(selector, dict) else None
    if not isinstance(cel, dict):
        return [required(f"{path}.cel")]
    if stored:
        return []
    expression = text(cel, "expression")
    if limits.too_many and len(expression.encode()) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        return [too_long_bytes(f"{path}.cel.expression", CEL_SELECTOR_EXPRESSION_MAX_LENGTH)]
    message = compile_check(expression)
    if message is not None:
        return [invalid(f"{path}.cel.expression", expression, message)]
    if limits.too_many and (estimate_cost(expression) or 0) > CEL_SELECTOR_EXPRESSION_MAX_COST:
        return [forbidden(f"{path}.cel.expression", "too complex, exceeds cost limit")]
    return []


def validate_selectors(
    selectors: list[Any], path: str, *, stored: bool, limits: ResourceLimits = LIMITS_1_31
) -> list[FieldError]:
    return validate_slice(
        selectors,
        DEVICE_SELECTORS_MAX_SIZE,
        lambda s, p: validate_selector(s, p, stored=stored, limits=limits),
        path,
        limits=limits,
    )
