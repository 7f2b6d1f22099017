"""Who may write what: a small authorization table and Kubernetes' NodeRestriction.

Writes carry an authenticated identity. `Authorizer` decides by a documented
table (docs/authorization.md) in the spirit of the default RBAC roles;
`NodeRestriction` then limits node identities (``system:node:<name>``) to
their own node, their own pods' status, their own ResourceSlices and their
own Lease in ``kube-node-lease``, with the messages of Kubernetes'
NodeRestriction admission plugin. Both are admission plugins, so every write
path gets them.

`Authorizer.allowed` is the one decision: the admission plugin asks it for
every write, and the SelfSubjectAccessReview and SelfSubjectRulesReview the
apiserver answers (``kubectl auth can-i``) ask it and `Authorizer.rules` too,
so what can-i says is what a write gets.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.api.admission.chain import Attributes, View
from services.api.machinery import status as st
from services.api.types import registry
from topics.envelope import UserInfo

MASTERS = "system:masters"
NODES_GROUP = "system:nodes"
NODE_PREFIX = "system:node:"
ANONYMOUS = "system:anonymous"
SCHEDULER = "system:kube-scheduler"
CONTROLLER_MANAGER = "system:kube-controller-manager"
DRA_CONTROLLER = "system:serviceaccount:kube-system:dra-controller"
NODE_LEASE_NAMESPACE = "kube-node-lease"


def node_user(node: str) -> UserInfo:
    """The identity a node's components (driver, node agent) write with."""
    return UserInfo(f"{NODE_PREFIX}{node}", (NODES_GROUP, "system:authenticated"))

_VERBS = {"CREATE": "create", "UPDATE": "update", "DELETE": "delete"}
# Reads are allowed to every user the server lets in (docs/authorization.md).
READ_VERBS = ("get", "list", "watch")
# API verbs that reach the committer as another write: a patch is an update, a
# deletecollection deletes each item.
_WRITE_AS = {"patch": "update", "deletecollection": "delete"}

# identity -> set of "verb resource[/subresource]" it may do; "*" matches any.
_RULES: dict[str, frozenset[str]] = {
    SCHEDULER: frozenset(
        {
            "create pods/binding",
            "update pods/status",
            "update resourceclaims",
            "update resourceclaims/status",
            # the claim for a pod's extended resources (bootstrap policy with DRAExtendedResource, on since 1.36)
            "create resourceclaims",
            "delete resourceclaims",
            "create podschedulingcontexts",
            "update podschedulingcontexts",
            "delete podschedulingcontexts",
            "create events",
            "update events",
            # leader election (kube-system Leases)
            "create leases",
            "update leases",
        }
    ),
    CONTROLLER_MANAGER: frozenset(
        {
            "create resourceclaims",
            "update resourceclaims",
            "update resourceclaims/status",
            "delete resourceclaims",
            "update pods/status",
            "create events",
            "update events",
            # leader election (kube-system Leases)
            "create leases",
            # the garbage collector: remove finalizers and delete dependents of any kind
            "update *",
            "delete *",
        }
    ),
    DRA_CONTROLLER: frozenset(
        {
            "update resourceclaims/status",
            "update resourceclaims",
            "update podschedulingcontexts/status",
            "create events",
            "update events",
            # leader election of the control-plane replicas (kube-system Leases)
            "create leases",
            "update leases",
        }
    ),
    NODES_GROUP: frozenset(
        {
            "create nodes",
            "update nodes",
            "update nodes/status",
            "update pods/status",
            "delete pods",
            "create resourceslices",
            "update resourceslices",
            "delete resourceslices",
            # the node's heartbeat Lease in kube-node-lease
            "create leases",
            "update leases",
            "delete leases",
            "create events",
            "update events",
        }
    ),
}


def node_name_of(user_name: str) -> str | None:
    return user_name[len(NODE_PREFIX) :] if user_name.startswith(NODE_PREFIX) else None


def _identities(user: UserInfo) -> list[str]:
    identities = [user.name, *user.groups]
    if node_name_of(user.name) is not None:
        identities.append(NODES_GROUP)
    return identities


@dataclass(frozen=True, slots=True)
class ResourceRule:
    """What a SelfSubjectRulesReview lists: verbs on resources of API groups (``*`` for all)."""

    verbs: tuple[str, ...]
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NonResourceRule:
    """What a SelfSubjectRulesReview lists for paths outside the API (``/version``, ``/healthz``)."""

    verbs: tuple[str, ...]
    urls: tuple[str, ...]


@dataclass
class Authorizer:
    """The authorization table as an admission plugin (it runs first)."""

    anonymous_writes: bool = False
    name: str = "Authorization"

    def unrestricted(self, user: UserInfo) -> bool:
        return MASTERS in user.groups or (user.name == ANONYMOUS and self.anonymous_writes)

    def allowed(
        self, user: UserInfo, *, verb: str, resource: str, subresource: str = "", group: str | None = None
    ) -> bool:
        """Whether ``user`` may ``verb`` the resource (a plural) or its subresource.

        Reads are allowed; ``patch`` is judged as the update it becomes and
        ``deletecollection`` as a delete. ``group``, when given, must be the
        resource's own API group for a rule naming the resource to apply.
        """
        if self.unrestricted(user) or verb in READ_VERBS:
            return True
        verb = _WRITE_AS.get(verb, verb)
        wanted = f"{verb} {resource}" + (f"/{subresource}" if subresource else "")
        named = group is None or group == _group_of(resource)
        for identity in _identities(user):
            rules = _RULES.get(identity)
            if rules and ((named and wanted in rules) or f"{verb} *" in rules):
                return True
        return False

    def allowed_non_resource(self, user: UserInfo, *, verb: str) -> bool:
        """Paths outside the API (discovery, OpenAPI, health, metrics) are read by everyone and written by no one."""
        return self.unrestricted(user) or verb == "get"

    def non_resource_rules(self, user: UserInfo) -> list[NonResourceRule]:
        return [NonResourceRule(("*",) if self.unrestricted(user) else ("get",), ("*",))]

    def rules(self, user: UserInfo) -> list[ResourceRule]:
        """Every rule that applies to ``user``, as RBAC's rule resolver lists them (verbs grouped per resource)."""
        if self.unrestricted(user):
            return [ResourceRule(("*",), ("*",), ("*",))]
        out = [ResourceRule(READ_VERBS, ("*",), ("*",))]
        verbs_of: dict[tuple[str, str], list[str]] = {}
        for identity in _identities(user):
            for rule in sorted(_RULES.get(identity, ())):
                verb, resource = rule.split(" ", 1)
                group = "*" if resource == "*" else (_group_of(resource) or "")
                verbs = verbs_of.setdefault((group, resource), [])
                if verb not in verbs:
                    verbs.append(verb)
        out.extend(ResourceRule(tuple(verbs), (group,), (resource,)) for (group, resource), verbs in verbs_of.items())
        return out

    def admit(self, attrs: Attributes, view: View) -> None:
        user = attrs.user
        verb = _VERBS[attrs.operation]
        if self.allowed(user, verb=verb, resource=attrs.resource.plural, subresource=attrs.subresource):
            return
        resource = attrs.resource.plural + (f"/{attrs.subresource}" if attrs.subresource else "")
        scope = f'in the namespace "{attrs.namespace}"' if attrs.resource.namespaced else "at the cluster scope"
        # RBAC judges the URL, as kube-apiserver's ForbiddenStatusError words it: the
        # resource without its subresource, and no name when creating in a collection.
        name = "" if attrs.operation == "CREATE" and not attrs.subresource else attrs.name
        raise st.forbidden(
            attrs.resource.group,
            attrs.resource.plural,
            name,
            f'User "{user.name}" cannot {verb} resource "{resource}" in API group "{attrs.resource.group}" {scope}',
        )


def _group_of(resource: str) -> str | None:
    """The API group of a table entry's resource (plurals are unique across draplane's groups); None if unknown."""
    plural = resource.split("/", 1)[0]
    return next((rt.group for rt in registry.RESOURCES if rt.plural == plural), None)


@dataclass
class NodeRestriction:
    """Kubernetes' NodeRestriction for the resources draplane serves."""

    name: str = "NodeRestriction"

    def admit(self, attrs: Attributes, view: View) -> None:
        node = node_name_of(attrs.user.name)
        if node is None:
            return
        if not node:
            self._deny(attrs, f'could not determine node from user "{attrs.user.name}"')
        kind = (attrs.resource.group, attrs.resource.plural)
        if kind == ("", "pods"):
            self._pod(node, attrs)
        elif kind == ("", "nodes"):
            self._node(node, attrs)
        elif kind == ("resource.k8s.io", "resourceslices"):
            self._slice(node, attrs)
        elif kind == ("coordination.k8s.io", "leases"):
            self._lease(node, attrs)

    def _lease(self, node: str, attrs: Attributes) -> None:
        if attrs.namespace != NODE_LEASE_NAMESPACE:
            self._deny(attrs, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace')
        name = ((attrs.new or {}).get("metadata") or {}).get("name") if attrs.operation == "CREATE" else attrs.name
        if name != node:
            self._deny(attrs, "can only access node lease with the same name as the requesting node")

    def _pod(self, node: str, attrs: Attributes) -> None:
        old, new = attrs.old or {}, attrs.new or {}
        if attrs.subresource == "status":
            if attrs.operation != "UPDATE":
                self._deny(attrs, f'unexpected operation "{attrs.operation}"')
            if (old.get("spec") or {}).get("nodeName") != node:
                self._deny(attrs, f'node "{node}" can only update pod status for pods with spec.nodeName set to itself')
            if (old.get("metadata") or {}).get("labels") != (new.get("metadata") or {}).get("labels"):
                self._deny(attrs, f'node "{node}" cannot update labels through pod status')
            old_claims = (old.get("status") or {}).get("resourceClaimStatuses")
            new_claims = (new.get("status") or {}).get("resourceClaimStatuses")
            if (old_claims or []) != (new_claims or []):
                self._deny(attrs, f'node "{node}" cannot update resource claim statues')
        elif attrs.subresource:
            self._deny(
                attrs, f"unexpected pod subresource \"{attrs.subresource}\", only 'status' and 'eviction' are allowed"
            )
        elif attrs.operation == "DELETE":
            if (old.get("spec") or {}).get("nodeName") != node:
                self._deny(attrs, f'node "{node}" can only delete pods with spec.nodeName set to itself')
        else:
            self._deny(
                attrs, f'unexpected operation "{attrs.operation}", node "{node}" can only create and delete mirror pods'
            )

    def _node(self, node: str, attrs: Attributes) -> None:
        requested = attrs.name or ((attrs.new or {}).get("metadata") or {}).get("name", "")
        if requested != node:
            self._deny(attrs, f'node "{node}" is not allowed to modify node "{requested}"')
        if attrs.operation == "UPDATE" and attrs.subresource != "status":
            old_taints = ((attrs.old or {}).get("spec") or {}).get("taints")
            new_taints = ((attrs.new or {}).get("spec") or {}).get("taints")
            if (old_taints or []) != (new_taints or []):
                self._deny(attrs, f'node "{node}" is not allowed to modify taints')

    def _slice(self, node: str, attrs: Attributes) -> None:
        if attrs.operation == "CREATE":
            if ((attrs.new or {}).get("spec") or {}).get("nodeName") != node:
                self._deny(attrs, "can only create ResourceSlice with the same NodeName as the requesting node")
        elif attrs.operation == "DELETE":
            if ((attrs.old or {}).get("spec") or {}).get("nodeName") != node:
                self._deny(attrs, "can only delete ResourceSlice with the same NodeName as the requesting node")
        else:
            # The node authorizer only relates a node to slices that name it, before and after.
            old_node = ((attrs.old or {}).get("spec") or {}).get("nodeName")
            new_node = ((attrs.new or {}).get("spec") or {}).get("nodeName")
            if old_node != node or new_node != node:
                raise st.forbidden(
                    attrs.resource.group,
                    attrs.resource.plural,
                    attrs.name,
                    f'User "{attrs.user.name}" cannot update resource "resourceslices" in API group '
                    f"\"resource.k8s.io\" at the cluster scope: no relationship found between node '{node}' "
                    "and this object",
                )

    @staticmethod
    def _deny(attrs: Attributes, message: str) -> None:
        raise st.forbidden(attrs.resource.group, attrs.resource.plural, attrs.name, message)
