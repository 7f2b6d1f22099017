"""The quantity and semver libraries: semver parsing as Kubernetes does, and their CEL functions.

Quantity parsing itself is tested in tests/unit/kube/test_quantity.py.
"""

from __future__ import annotations

import pytest

from services.kube.cel import CelRuntimeError, compile, device_view, evaluate
from services.kube.cel import semver as sv


@pytest.mark.parametrize(
    ("text", "major", "minor", "patch", "pre"),
    [
        ("1.2.3", 1, 2, 3, ()),
        ("0.1.0-alpha.1", 0, 1, 0, ("alpha", 1)),
        ("1.0.0-rc.1+build.5", 1, 0, 0, ("rc", 1)),
        ("1.0.0+build", 1, 0, 0, ()),
        ("1.0.0-x-y", 1, 0, 0, ("x-y",)),
    ],
)
def test_parse_semver(text: str, major: int, minor: int, patch: int, pre: tuple[object, ...]) -> None:
    v = sv.parse(text)
    assert (v.major, v.minor, v.patch, v.pre) == (major, minor, patch, pre)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Version string empty"),
        ("1.0", "No Major.Minor.Patch elements found"),
        ("v1.0.0", 'Invalid character(s) found in major number "v1"'),
        ("01.0.0", 'Major number must not contain leading zeroes "01"'),
        ("1.01.0", 'Minor number must not contain leading zeroes "01"'),
        ("1.0.0-01", 'Numeric PreRelease version must not contain leading zeroes "01"'),
        ("1.0.0-", "Prerelease is empty"),
        ("1.0.0-a..b", "Prerelease is empty"),
        ("1.0.0+", "Build meta data is empty"),
        ("1.0.0-a_b", 'Invalid character(s) found in prerelease "a_b"'),
        ("1.0.x", 'Invalid character(s) found in patch number "x"'),
    ],
)
def test_parse_semver_errors(text: str, message: str) -> None:
    with pytest.raises(sv.SemverError) as err:
        sv.parse(text)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("a", "b", "order"),
    [
        ("1.0.0", "1.0.0", 0),
        ("1.0.0", "2.0.0", -1),
        ("1.10.0", "1.9.0", 1),
        ("1.0.0-alpha", "1.0.0", -1),
        ("1.0.0-alpha", "1.0.0-alpha.1", -1),
        ("1.0.0-alpha.1", "1.0.0-alpha.beta", -1),
        ("1.0.0-beta.2", "1.0.0-beta.11", -1),
        ("1.0.0-rc.1", "1.0.0-beta.11", 1),
        ("1.0.0+a", "1.0.0+b", 0),
    ],
)
def test_semver_order(a: str, b: str, order: int) -> None:
    assert sv.compare(sv.parse(a), sv.parse(b)) == order


EMPTY = device_view(driver="")

# (expression, expected result or error fragment) in the spirit of the
# apiserver quantity library tests.
CEL_CASES: list[tuple[str, bool | str]] = [
    ('quantity("12Mi") == quantity("12Mi")', True),
    ('quantity("200M") == quantity("0.2G")', True),
    ('quantity("200M").compareTo(quantity("0.2G")) == 0', True),
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
    ('quantity("50k").add(20) == quantity("50020")', True),
    ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
    ('quantity("50k").sub(20) == quantity("49980")', True),
    ('quantity("50M").asInteger() == 50000000', True),
    ('quantity("50k").asApproximateFloat() == 50000.0', True),
    ('quantity("50.5").isInteger()', False),
    ('quantity("50").isInteger()', True),
    ('quantity("-50").sign() == -1 && quantity("0").sign() == 0 && quantity("1m").sign() == 1', True),
    ('quantity("1Gi").isGreaterThan(quantity("1G"))', True),
    ('quantity("1G").isLessThan(quantity("1Gi"))', True),
    ('isQuantity("200M") && !isQuantity("20Mo")', True),
    ('quantity("10Mo") == quantity("1")', "quantities must match the regular expression"),
    ('quantity("50.5").asInteger() == 50', "cannot convert value to integer"),
    ('quantity("20E").asInteger() > 0', "cannot convert value to integer"),
    ('quantity("20Ei").asInteger() == 9223372036854775807', True),  # binary SI is capped
    ('semver("1.2.3").isGreaterThan(semver("1.2.2"))', True),
    ('semver("1.2.3").isLessThan(semver("1.10.0"))', True),
    ('semver("1.0.0-alpha").compareTo(semver("1.0.0")) == -1', True),
    ('semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3', True),
    ('isSemver("1.0.0") && !isSemver("v1.0") && !isSemver("1.0")', True),
    ('semver("1.0") == semver("1.0.0")', "No Major.Minor.Patch elements found"),
    ('[semver("2.0.0"), semver("10.0.0")].isSorted()', True),
    ('[quantity("2Gi"), quantity("3G")].isSorted()', True),
]


@pytest.mark.parametrize(("expression", "expected"), CEL_CASES)
def test_cel_functions(expression: str, expected: bool | str) -> None:
    compiled = compile(expression)
    assert compiled.error is None, compiled.error
    got = evaluate(compiled, EMPTY)
    if isinstance(expected, bool):
        assert got is expected
    else:
        assert isinstance(got, CelRuntimeError)
        assert expected in str(got)
