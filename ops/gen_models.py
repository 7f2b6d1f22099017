"""Generate the typed API models (`services/api/types/<module>.py`) from Kubernetes' own schemas.

Why this script exists: the models must have exactly the fields Kubernetes'
Go types have, with the right JSON types, so that strict decoding accepts what
kube-apiserver accepts. Copying them by hand drifted; this writes them from
`services.api.types.schemas` (the ``kubernetes-validate`` package's schemas)
instead. ``tests/unit/api/test_generated_models.py`` fails when a module
differs from a fresh run.

    .venv/bin/python -m ops.gen_models --write   # rewrite the modules
    .venv/bin/python -m ops.gen_models           # exit 1 when one is stale

Why generated modules rather than building Structs at start-up
(``msgspec.defstruct``): the classes are the same msgspec Structs either way,
so decoding costs the same, but generated modules cost nothing at start-up and
mypy and readers see every class and field (docs/decisions/models.md).

The storage (hub) form of resource.k8s.io (`resource_hub`, `HUB`) is generated
too: the base version's models with every field the 1.31 version's same-named
types have and the base lacks (the classic DRA fields), subclassing only the
types on the path to them (docs/decisions/api-versions.md).

The conventions of docs/decisions/models.md are applied here: every field
optional (``None``), Go type names as class names, Kubernetes' scalars as the
aliases of `services.api.types.base`.
"""

from __future__ import annotations

import argparse
import keyword
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import msgspec

from services.api.types.schemas import Definition, Property, Schemas, TypeRef, go_name, schemas

ROOT = Path(__file__).resolve().parents[1]
TYPES_DIR = ROOT / "services" / "api" / "types"


@dataclass(frozen=True)
class ModuleSpec:
    """One generated module: the definitions of one Go package in one Kubernetes release."""

    module: str  # Python module name under services.api.types
    release: str  # Kubernetes release the shapes come from
    prefix: str  # definition-name prefix of the Go package
    roots: tuple[str, ...]  # definitions served (their closure within the package is generated)
    title: str  # what the module holds, for its docstring
    # (release, definition, field): a later release's field a component already writes, typed from that release
    backports: tuple[tuple[str, str, str], ...] = ()


META = "io.k8s.apimachinery.pkg.apis.meta.v1."
CORE = "io.k8s.api.core.v1."
V1ALPHA3 = "io.k8s.api.resource.v1alpha3."

MODULES: tuple[ModuleSpec, ...] = (
    ModuleSpec(
        "meta",
        "1.31",
        META,
        (
            META + "Status",
            META + "DeleteOptions",
            META + "ObjectMeta",
            META + "LabelSelector",
            META + "Condition",
            META + "FieldSelectorRequirement",  # authorization.k8s.io/v1 FieldSelectorAttributes
        ),
        "meta.k8s.io/v1 types shared by every kind (k8s.io/apimachinery/pkg/apis/meta/v1, Kubernetes 1.31)",
    ),
    ModuleSpec(
        "core_v1",
        "1.31",
        CORE,
        tuple(
            CORE + k
            for k in (
                "Namespace",
                "Node",
                "Pod",
                "Binding",
                "Event",
                # served for upstream kube-scheduler's and kube-controller-manager's informers
                "PersistentVolume",
                "PersistentVolumeClaim",
                "Service",
                "ReplicationController",
                "TopologySelectorTerm",  # storage.k8s.io/v1 StorageClass's allowedTopologies
            )
        ),
        "core/v1 types draplane serves (k8s.io/api/core/v1, Kubernetes 1.31)",
        # DRAExtendedResource: the scheduler records the claim it made for a pod's extended resources.
        (("1.37", CORE + "PodStatus", "extendedResourceClaimStatus"),),
    ),
    ModuleSpec(
        "resource_v1alpha3",
        "1.31",
        V1ALPHA3,
        tuple(
            V1ALPHA3 + k
            for k in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "PodSchedulingContext")
        ),
        "resource.k8s.io/v1alpha3 types (k8s.io/api/resource/v1alpha3, Kubernetes 1.31), the group's storage version",
    ),
    ModuleSpec(
        "coordination_v1",
        "1.31",
        "io.k8s.api.coordination.v1.",
        ("io.k8s.api.coordination.v1.Lease",),
        "coordination.k8s.io/v1 types: Lease (k8s.io/api/coordination/v1, Kubernetes 1.31)",
    ),
    ModuleSpec(
        "apps_v1",
        "1.31",
        "io.k8s.api.apps.v1.",
        ("io.k8s.api.apps.v1.ReplicaSet", "io.k8s.api.apps.v1.StatefulSet"),
        "apps/v1 types: ReplicaSet and StatefulSet (k8s.io/api/apps/v1, Kubernetes 1.31)",
    ),
    ModuleSpec(
        "policy_v1",
        "1.31",
        "io.k8s.api.policy.v1.",
        ("io.k8s.api.policy.v1.PodDisruptionBudget",),
        "policy/v1 types: PodDisruptionBudget (k8s.io/api/policy/v1, Kubernetes 1.31)",
    ),
    ModuleSpec(
        "storage_v1",
        "1.31",
        "io.k8s.api.storage.v1.",
        tuple(
            "io.k8s.api.storage.v1." + k for k in ("StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity")
        ),
        "storage.k8s.io/v1 types: StorageClass, CSINode, CSIDriver and CSIStorageCapacity (Kubernetes 1.31)",
    ),
    ModuleSpec(
        "events_v1",
        "1.31",
        "io.k8s.api.events.v1.",
        ("io.k8s.api.events.v1.Event",),
        "events.k8s.io/v1 types: Event (k8s.io/api/events/v1, Kubernetes 1.31)",
    ),
    ModuleSpec(
        "authentication_v1",
        "1.31",
        "io.k8s.api.authentication.v1.",
        ("io.k8s.api.authentication.v1.SelfSubjectReview",),
        "authentication.k8s.io/v1 types: SelfSubjectReview (Kubernetes 1.31)",
    ),
    ModuleSpec(
        "authorization_v1",
        "1.31",
        "io.k8s.api.authorization.v1.",
        (
            "io.k8s.api.authorization.v1.SelfSubjectAccessReview",
            "io.k8s.api.authorization.v1.SelfSubjectRulesReview",
        ),
        "authorization.k8s.io/v1 types: SelfSubjectAccessReview and SelfSubjectRulesReview (Kubernetes 1.31)",
    ),
    *(
        ModuleSpec(
            f"resource_{version}",
            "1.37",
            f"io.k8s.api.resource.{version}.",
            tuple(f"io.k8s.api.resource.{version}.{kind}" for kind in kinds),
            f"resource.k8s.io/{version} types (k8s.io/api/resource/{version}, Kubernetes 1.37); not served yet",
        )
        for version, kinds in (
            ("v1", ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceTaintRule")),
            ("v1beta2", ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceTaintRule")),
            ("v1beta1", ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")),
        )
    ),
)

_SCALAR_ALIASES = {
    "quantity": "Quantity",
    "intorstring": "IntOrString",
    "time": "Time",
    "microtime": "MicroTime",
    "any": "RawJSON",
}
_INTEGER_FORMATS = {"int32": "Int32", "int64": "Int64", "": "Int64"}
# Attribute names that would shadow a name the annotations use (msgspec
# resolves a Struct's annotations with the class namespace in scope).
_SHADOWING = {"int", "bool", "str", "float", "dict", "list"}


def _module_of(name: str) -> ModuleSpec | None:
    return next((m for m in MODULES if name.startswith(m.prefix)), None)


def attr_name(wire: str) -> str:
    """The Python attribute of a wire name: snake case, clear of keywords and shadowed builtins."""
    # Words: an acronym with a plural "s" (podCIDRs), a capitalised or lower word, an acronym (hostIP).
    words = re.findall(r"[A-Z]{2,}s(?![a-z])|[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", wire)
    if "".join(words) != wire:
        raise ValueError(f"cannot split wire name {wire!r} into words")
    snake = "_".join(words).lower()
    if snake in _SHADOWING:
        return snake + "_value"
    if keyword.iskeyword(snake) or snake == "self":
        return snake + "_"
    return snake


def _camel(attr: str) -> str:
    """The wire name msgspec's ``rename="camel"`` gives an attribute."""
    probe = msgspec.defstruct("Probe", [(attr, int)], rename="camel")
    return msgspec.structs.fields(probe)[0].encode_name


class _Writer:
    def __init__(self, spec: ModuleSpec, defs: Schemas) -> None:
        self.spec = spec
        self.defs = defs
        self.base: set[str] = {"K8sStruct"}
        self.imports: dict[str, set[str]] = {}
        self.uses_field = False
        self.extra: dict[str, Definition] = {}  # backported definitions (ModuleSpec.backports)
        self.extra_release: dict[str, str] = {}

    def _get(self, name: str) -> Definition:
        found = self.extra.get(name)
        return found if found is not None else self.defs.get(name)

    def annotation(self, tp: TypeRef) -> str:
        if tp.kind == "ref":
            target = self._get(tp.ref)
            if target.scalar:
                alias = _SCALAR_ALIASES[target.scalar]
                self.base.add(alias)
                return alias
            owner = _module_of(tp.ref)
            if owner is None:
                raise ValueError(f"{tp.ref} belongs to no generated module")
            if owner.module != self.spec.module:
                self._check_same_shape(tp.ref, owner)
                self.imports.setdefault(owner.module, set()).add(go_name(tp.ref))
            return go_name(tp.ref)
        if tp.kind == "array":
            assert tp.item is not None
            return f"list[{self.annotation(tp.item)}]"
        if tp.kind == "map":
            assert tp.item is not None
            return f"dict[str, {self.annotation(tp.item)}]"
        if tp.kind == "integer":
            alias = _INTEGER_FORMATS[tp.format]
            self.base.add(alias)
            return alias
        if tp.kind == "object":
            self.base.add("RawJSON")
            return "RawJSON"
        return {"string": "str", "boolean": "bool", "number": "float"}[tp.kind]

    def _check_same_shape(self, name: str, owner: ModuleSpec) -> None:
        """A type shared with another module's release must have the same fields there (1.37's resource.k8s.io/v1
        uses core/v1 NodeSelector, generated from 1.31)."""
        if owner.release == self.spec.release:
            return
        for defs in (self.defs, schemas(owner.release)):
            for reached in defs.closure([name]):
                ours, theirs = self.defs.get(reached), schemas(owner.release).get(reached)
                shape = {k: p.type for k, p in ours.properties.items()}
                if shape != {k: p.type for k, p in theirs.properties.items()}:
                    raise ValueError(f"{reached} differs between Kubernetes {self.spec.release} and {owner.release}")

    def struct(self, definition: Definition) -> list[str]:
        lines = [f"class {definition.go_name}(K8sStruct):"]
        if not definition.properties:
            lines.append("    pass")
        items = list(definition.properties.items())
        backported = [
            (wire, schemas(release).get(name).properties[wire])
            for release, name, wire in self.spec.backports
            if name == definition.name
        ]
        if backported:
            items = sorted(items + backported, key=lambda item: item[0])
        for wire, prop in items:
            attr = attr_name(wire)
            annotation = self.annotation(prop.type)
            optional = annotation if annotation == "RawJSON" else f"{annotation} | None"
            if _camel(attr) == wire:
                lines.append(f"    {attr}: {optional} = None")
            else:
                self.uses_field = True
                lines.append(f'    {attr}: {optional} = msgspec.field(default=None, name="{wire}")')
        return lines

    def module(self) -> str:
        names = [n for n in self.defs.closure(self.spec.roots) if n.startswith(self.spec.prefix)]
        for release, name, wire in self.spec.backports:
            later = schemas(release)
            for reached in later.closure(later.get(name).properties[wire].type.refs()):
                if reached not in names and reached.startswith(self.spec.prefix):
                    # Backported types are new in ``release``: absent from this module's own release.
                    if reached in self.defs:
                        raise ValueError(f"{reached} exists in Kubernetes {self.spec.release}: no backport needed")
                    names.append(reached)
                    self.extra[reached] = later.get(reached)
                    self.extra_release[reached] = release
        definitions = sorted((self._get(n) for n in names if not self._get(n).scalar), key=lambda d: d.go_name)
        body: list[str] = []
        for definition in definitions:
            body += ["", "", *self.struct(definition)]
        local = {d.go_name for d in definitions}
        head = [
            f'"""{self.spec.title}.',
            "",
            "Generated by `python -m ops.gen_models --write` from Kubernetes' own schemas",
            f"(`services.api.types.schemas`, Kubernetes {self.spec.release}); do not edit. Every type the",
            "served kinds reach in this Go package, with every field; class names are the Go",
            "type names (decode errors print them). Conventions: docs/decisions/models.md.",
            *(
                f"Backported from Kubernetes {release}: {go_name(name)}.{wire} and the types it reaches."
                for release, name, wire in self.spec.backports
            ),
            '"""',
            "",
            "from __future__ import annotations",
            "",
        ]
        if self.uses_field:
            head += ["import msgspec", ""]
        head.append(f"from services.api.types.base import {', '.join(sorted(self.base))}")
        for module in sorted(self.imports):
            clash = self.imports[module] & local
            if clash:
                raise ValueError(f"{sorted(clash)} of {module} clash with {self.spec.module}'s own types")
            head.append(f"from services.api.types.{module} import {', '.join(sorted(self.imports[module]))}")
        facts = [
            "",
            "# Where these types come from: Kubernetes' schemas (services.api.types.schemas).",
            f'K8S_RELEASE = "{self.spec.release}"',
            f'DEFINITION_PREFIX = "{self.spec.prefix}"',
        ]
        if self.spec.backports:
            types = ", ".join(f'"{go_name(n)}": "{r}"' for n, r in sorted(self.extra_release.items()))
            fields = ", ".join(f'"{go_name(n)}.{w}": "{r}"' for r, n, w in self.spec.backports)
            facts += [
                "# Types and fields taken from a later release's schemas (ModuleSpec.backports).",
                f"BACKPORTED_TYPES = {{{types}}}",
                f"BACKPORTED_FIELDS = {{{fields}}}",
            ]
        return "\n".join(head + facts + body) + "\n"


def render(spec: ModuleSpec) -> str:
    """The source of one generated module."""
    return _Writer(spec, schemas(spec.release)).module()


# ---------------------------------------------------------------- the hub (storage) form of resource.k8s.io


@dataclass(frozen=True)
class HubSpec:
    """The storage form of resource.k8s.io (docs/decisions/api-versions.md): ``base``'s models (1.37's v1beta1)
    plus every field that ``classic``'s same-named types (1.31's v1alpha3) have and ``base``'s lack."""

    module: str
    base: ModuleSpec
    classic: ModuleSpec
    kinds: tuple[str, ...]  # kinds stored in the base layout
    elsewhere: tuple[
        tuple[str, str], ...
    ]  # (kind, module): kinds the base version lacks, stored in that module's shape


HUB = HubSpec(
    "resource_hub",
    base=next(m for m in MODULES if m.module == "resource_v1beta1"),
    classic=next(m for m in MODULES if m.module == "resource_v1alpha3"),
    kinds=("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"),
    elsewhere=(("DeviceTaintRule", "resource_v1"), ("PodSchedulingContext", "resource_v1alpha3")),
)


def _refs_of(tp: TypeRef) -> list[str]:
    if tp.kind == "ref":
        return [tp.ref]
    return _refs_of(tp.item) if tp.item is not None else []


class _HubWriter(_Writer):
    """Writes the classes of the hub that differ from the base version's: a type with a classic-only field, and
    every type on the path from a kind to one (its field must name the extended class)."""

    def __init__(self, hub: HubSpec) -> None:
        spec = ModuleSpec(hub.module, hub.base.release, "", (), "")
        super().__init__(spec, schemas(hub.base.release))
        self.hub = hub
        self.base_defs = schemas(hub.base.release)
        self.classic_defs = schemas(hub.classic.release)
        self.redeclared: set[str] = set()  # base definition names written as subclasses here

    def annotation(self, tp: TypeRef) -> str:
        if tp.kind == "ref" and tp.ref in self.redeclared:
            return go_name(tp.ref)
        return super().annotation(tp)

    def classic_only(self, base_name: str) -> dict[str, Property]:
        """The fields the classic version's type of the same Go name has and the base type lacks."""
        classic_name = self.hub.classic.prefix + base_name[len(self.hub.base.prefix) :]
        if classic_name not in self.classic_defs:
            return {}
        theirs = self.base_defs.get(base_name).properties
        return {w: p for w, p in self.classic_defs.get(classic_name).properties.items() if w not in theirs}

    def field_line(self, wire: str, prop: Property, *, comment: str = "") -> str:
        attr = attr_name(wire)
        annotation = self.annotation(prop.type)
        optional = annotation if annotation == "RawJSON" else f"{annotation} | None"
        note = f"  # {comment}" if comment else ""
        if _camel(attr) == wire:
            return f"    {attr}: {optional} = None{note}"
        self.uses_field = True
        return f'    {attr}: {optional} = msgspec.field(default=None, name="{wire}"){note}'

    def module(self) -> str:
        hub, base = self.hub, self.hub.base
        closure = [n for n in self.base_defs.closure(base.prefix + k for k in hub.kinds) if n.startswith(base.prefix)]
        extras = {n: self.classic_only(n) for n in closure}
        self.redeclared = {n for n, fields in extras.items() if fields}
        while True:
            more = {
                n
                for n in closure
                if n not in self.redeclared
                and any(
                    r in self.redeclared for p in self.base_defs.get(n).properties.values() for r in _refs_of(p.type)
                )
            }
            if not more:
                break
            self.redeclared |= more
        body: list[str] = []
        for name in sorted(self.redeclared, key=go_name):
            definition = self.base_defs.get(name)
            lines = ["", "", f"class {definition.go_name}({base.module}.{definition.go_name}):"]
            for wire, prop in definition.properties.items():
                if any(r in self.redeclared for r in _refs_of(prop.type)):
                    lines.append(self.field_line(wire, prop))
            self.defs = self.classic_defs  # classic-only fields are typed from the classic release's schemas
            for wire, prop in extras[name].items():
                lines.append(self.field_line(wire, prop, comment=f"Kubernetes {hub.classic.release} only"))
            self.defs = self.base_defs
            body += lines
        models = [
            (k, go_name(base.prefix + k) if base.prefix + k in self.redeclared else f"{base.module}.{k}")
            for k in hub.kinds
        ]
        models += [(k, f"{module}.{k}") for k, module in hub.elsewhere]
        aliases = [f"{k} = {target}" for k, target in models if "." in target]
        modules = sorted({base.module, *(m for _, m in hub.elsewhere)})
        classic_fields = sorted(f"{go_name(n)}.{w}" for n, fields in extras.items() for w in fields)
        listed = [f"``{f}``" for f in classic_fields]
        fields_text = ", ".join(listed[:-1]) + f" and {listed[-1]}" if len(listed) > 1 else "".join(listed)
        elsewhere = "; ".join(f"{k} in {module}'s" for k, module in hub.elsewhere)
        paragraph = (
            "Generated by `python -m ops.gen_models --write` from Kubernetes' own schemas "
            "(`services.api.types.schemas`); do not edit. The log holds every resource.k8s.io object in "
            "this form, whatever version a client wrote it with (docs/decisions/api-versions.md). It is "
            f"`{base.module}` (Kubernetes {base.release}) with every field that the same-named type of "
            f"`{hub.classic.module}` (Kubernetes {hub.classic.release}) has and {base.module}'s lacks: "
            f"{fields_text}. Only the types on the path to those fields are subclassed here; every other "
            f"type is {base.module}'s own. Kinds {base.module} lacks are stored in another version's "
            f"shape: {elsewhere}."
        )
        head = [
            '"""The storage (hub) form of resource.k8s.io: '
            f"Kubernetes {base.release}'s {base.module.rsplit('_', 1)[1]} layout plus the "
            f"{hub.classic.release}-only fields.",
            "",
            *textwrap.wrap(paragraph, width=100, break_on_hyphens=False),
            '"""',
            "",
            "from __future__ import annotations",
            "",
            "from collections.abc import Mapping",
            "from types import MappingProxyType",
            "",
        ]
        if self.uses_field:
            head += ["import msgspec", ""]
        head.append(f"from services.api.types import {', '.join(modules)}")
        head.append(f"from services.api.types.base import {', '.join(sorted(self.base | {'K8sStruct'}))}")
        for module in sorted(self.imports):
            head.append(f"from services.api.types.{module} import {', '.join(sorted(self.imports[module]))}")
        names = ["HUB_MODELS", *sorted({*(go_name(n) for n in self.redeclared), *(k for k, _ in models)})]
        head += ["", "__all__ = [", *(f'    "{n}",' for n in names), "]"]
        tail = [
            "",
            "",
            *aliases,
            "",
            "# kind → the hub model of that kind.",
            "HUB_MODELS: Mapping[str, type[K8sStruct]] = MappingProxyType(",
            "    {",
        ]
        tail += [f'        "{k}": {k},' for k, _ in models]
        tail += ["    }", ")"]
        return "\n".join(head + body + tail) + "\n"


def render_hub(hub: HubSpec = HUB) -> str:
    """The source of the hub module."""
    return _HubWriter(hub).module()


def rendered() -> dict[Path, str]:
    """Every generated module: path → fresh source."""
    modules = {TYPES_DIR / f"{spec.module}.py": render(spec) for spec in MODULES}
    return {**modules, TYPES_DIR / f"{HUB.module}.py": render_hub()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help="rewrite the generated modules")
    args = parser.parse_args(argv)
    stale = []
    for path, source in rendered().items():
        if not path.exists() or path.read_text() != source:
            stale.append(path)
            if args.write:
                path.write_text(source)
    for path in stale:
        print(f"{'wrote' if args.write else 'stale'}: {path.relative_to(ROOT)}", file=sys.stderr)
    return 0 if args.write or not stale else 1


if __name__ == "__main__":
    sys.exit(main())
