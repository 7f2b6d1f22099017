"""Kubernetes' NamespaceLifecycle admission plugin.

Why this module exists: kube-apiserver refuses to delete its immortal
namespaces, and refuses content created in a namespace that is missing (404)
or terminating (403, with a ``NamespaceTerminating`` cause), in the wording of
``k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle``. The plugin
guards deletes in the admission chain; the committer calls `check_create`
for every create and ``pods/binding`` before it decides anything else, so the
rule holds on every write path, with or without a full chain.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.api.admission.chain import Attributes, View
from services.api.machinery import status as st
from services.api.types.registry import ResourceType
from services.kube import namespaces


def check_create(view: View, rt: ResourceType, namespace: str, name: str) -> None:
    """Raise the Status NamespaceLifecycle answers for a create of ``rt`` in ``namespace``.

    ``name`` is what Kubernetes' admission attributes carry: the object's
    name, empty for a generateName create (names are generated after
    admission), the pod's name for ``pods/binding``.
    """
    if not rt.namespaced or (rt.group, rt.plural) == ("authorization.k8s.io", "localsubjectaccessreviews"):
        return
    ns = view.get("", "namespaces", "", namespace)
    if ns is None:
        raise st.not_found("", "namespaces", namespace)
    if namespaces.is_terminating(ns):
        err = st.forbidden(rt.group, rt.plural, name, namespaces.terminating_message(namespace))
        err.status["details"]["causes"] = [namespaces.terminating_cause(namespace)]
        raise err


@dataclass
class NamespaceLifecycle:
    """The admission plugin: the immortal namespaces may not be deleted."""

    name: str = "NamespaceLifecycle"

    def admit(self, attrs: Attributes, view: View) -> None:
        rt = attrs.resource
        if (
            attrs.operation == "DELETE"
            and (rt.group, rt.plural) == ("", "namespaces")
            and attrs.name in namespaces.IMMORTAL_NAMESPACES
        ):
            raise st.forbidden("", "namespaces", attrs.name, namespaces.IMMORTAL_MESSAGE)
