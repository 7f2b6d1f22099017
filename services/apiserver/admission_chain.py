"""The apiserver's admission chain, in the order Kubernetes runs it.

Authorization first, then NodeRestriction and NamespaceLifecycle, then mutation (defaulting and
feature-gate field dropping), then validation. The committer runs this chain
on every write, so every path — REST, component clients, replays — gets it.
"""

from __future__ import annotations

from services.api.admission.authorization import Authorizer, NodeRestriction
from services.api.admission.chain import AdmissionChain, AdmissionPlugin
from services.api.admission.namespace_lifecycle import NamespaceLifecycle
from services.api.admission.plugins import Defaulting, DropDisabledFields, Validation
from services.kube.feature_gates import FeatureGates


def build_admission(*, gates: FeatureGates | None = None, anonymous_writes: bool = False) -> AdmissionChain:
    gates = gates or FeatureGates()
    plugins: list[AdmissionPlugin] = [
        Authorizer(anonymous_writes=anonymous_writes),
        NodeRestriction(),
        NamespaceLifecycle(),
        Defaulting(),
        DropDisabledFields(gates),
        Validation(release=gates.release),
    ]
    return AdmissionChain(plugins)
