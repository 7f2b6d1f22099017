"""The scheduler's write rights match kube's ``system:kube-scheduler`` role for what it writes."""

from __future__ import annotations

import pytest

from services.api.admission.authorization import Authorizer
from services.api.admission.chain import Attributes
from services.api.machinery.status import StatusError
from services.api.types import registry
from services.scheduler.service import SCHEDULER_USER


def attrs(operation: str, group: str, plural: str, subresource: str = "") -> Attributes:
    resource = registry.by_resource(group, plural)
    assert resource is not None
    return Attributes(operation, resource, "default", "x", SCHEDULER_USER, subresource=subresource)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("operation", "group", "plural", "subresource"),
    [
        ("CREATE", "", "pods", "binding"),  # DefaultBinder
        ("UPDATE", "", "pods", "status"),  # the PodScheduled condition
        ("UPDATE", "resource.k8s.io", "resourceclaims", ""),  # PreBind: the delete-protection finalizer
        ("UPDATE", "resource.k8s.io", "resourceclaims", "status"),  # PreBind: allocation and reservedFor
        ("CREATE", "resource.k8s.io", "podschedulingcontexts", ""),  # classic DRA
        ("DELETE", "resource.k8s.io", "podschedulingcontexts", ""),  # PostBind
        ("CREATE", "resource.k8s.io", "resourceclaims", ""),  # 1.37: the extended resource claim (DRAExtendedResource)
        ("DELETE", "resource.k8s.io", "resourceclaims", ""),  # 1.37: a leftover extended resource claim
    ],
)
def test_scheduler_may_make_its_writes(operation: str, group: str, plural: str, subresource: str) -> None:
    Authorizer().admit(attrs(operation, group, plural, subresource), view=None)  # type: ignore[arg-type]


def test_scheduler_may_not_publish_slices() -> None:
    with pytest.raises(StatusError, match='User "system:kube-scheduler" cannot create resource "resourceslices"'):
        Authorizer().admit(attrs("CREATE", "resource.k8s.io", "resourceslices"), view=None)  # type: ignore[arg-type]
