"""What a request does to the state: the committer's pure decision logic.

`CommitterCore.process` turns one batch of requests into the records to append
and the replies to send, with Kubernetes' generic registry semantics: create
(generateName, uid, creationTimestamp, AlreadyExists), update (resourceVersion
and uid preconditions, status subresource, generation, no-op detection),
patch (applied to the latest committed object), delete (preconditions,
finalizers, propagation policies, pod graceful deletion), the
`pods/binding` subresource, and the namespace lifecycle (a namespace DELETE
marks it Terminating; it goes once ``namespaces/finalize`` has emptied its
``spec.finalizers``). Admission runs on every write. Nothing here does
I/O: the committer loop appends the records and feeds the offsets back through
`finish`, which stamps resourceVersions and advances the index.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import orjson

from services.api.admission.chain import AdmissionChain, Attributes
from services.api.admission.defaults import default_device_taint_times
from services.api.admission.namespace_lifecycle import check_create
from services.api.machinery import conversion
from services.api.machinery import status as st
from services.api.machinery.decode_errors import json_kind
from services.api.machinery.field_errors import forbidden, required
from services.api.types import registry
from services.api.types.registry import RESOURCE_GROUP, ResourceType
from services.kube import namespaces
from services.kube.generated_names import MAX_GENERATED_PREFIX_LENGTH, random_suffix
from services.kube.times import parse_time, time_text
from services.runtime.committer_state import PENDING, Index, Obj, Staged
from services.runtime.request_chains import Decision, Decisions, check_chain
from topics.envelope import EventType, Request, object_key

log = logging.getLogger(__name__)

GENERATE_NAME_RETRIES = 8
FOREGROUND_FINALIZER = "foregroundDeletion"
ORPHAN_FINALIZER = "orphan"
# Resources whose DELETE returns the deleted object instead of a Status: the stores with ReturnDeletedObject
# (pkg/registry/*/*/storage/storage.go, Kubernetes 1.31 and 1.37); every other kind answers a Success Status.
RETURNS_DELETED_OBJECT = {
    ("", "namespaces"),
    ("", "persistentvolumeclaims"),
    ("", "persistentvolumes"),
    ("", "pods"),
    ("", "podtemplates"),
    ("", "resourcequotas"),
    ("", "serviceaccounts"),
    ("", "services"),
    ("resource.k8s.io", "deviceclasses"),
    ("resource.k8s.io", "podschedulingcontexts"),
    ("resource.k8s.io", "resourceclaims"),
    ("resource.k8s.io", "resourceclaimtemplates"),
    ("resource.k8s.io", "resourceslices"),
    ("storage.k8s.io", "csidrivers"),
    ("storage.k8s.io", "csinodes"),
    ("storage.k8s.io", "storageclasses"),
    ("storage.k8s.io", "volumeattachments"),
    ("storage.k8s.io", "volumeattributesclasses"),
}
NAMESPACES = ("", "namespaces")
# Resources an update of a missing object creates (their strategies' AllowCreateOnUpdate, Kubernetes 1.31).
CREATE_ON_UPDATE = {("", "events"), ("", "services"), ("coordination.k8s.io", "leases"), ("events.k8s.io", "events")}
# Resources whose metadata.generation tracks spec changes: the strategies that set it (Kubernetes 1.31 and 1.37
# alike; DeviceTaintRules, 1.33+, as 1.37's strategy does); ResourceClaims, ResourceClaimTemplates and
# PodSchedulingContexts have none (oracle *-generation entries).
HAS_GENERATION = {
    ("resource.k8s.io", "deviceclasses"),
    ("resource.k8s.io", "resourceslices"),
    ("resource.k8s.io", "devicetaintrules"),
}


class Patcher(Protocol):
    """Applies a patch of a given type to the current object (None when absent)."""

    def __call__(
        self,
        *,
        rt: ResourceType,
        current: Obj | None,
        patch: Any,
        patch_type: str,
        manager: str,
        force: bool,
        now: str,
        subresource: str = "",
        version: str = "",
    ) -> Obj: ...


class Decoder(Protocol):
    """Structural decoding of a whole object (types, unknown fields) in ``version``; returns warnings."""

    def __call__(
        self, rt: ResourceType, obj: Obj, *, field_validation: str, version: str = ""
    ) -> tuple[Obj, list[str]]: ...


class FieldTracker(Protocol):
    """Records metadata.managedFields for a non-apply write."""

    def __call__(
        self, *, old: Obj | None, new: Obj, manager: str, api_version: str, subresource: str, now: str
    ) -> None: ...


@dataclass
class Write:
    key: str
    type: EventType
    object: Obj
    request_id: str
    offset: int = PENDING


@dataclass
class Outcome:
    request: Request
    code: int
    object: Obj | None = None
    status: dict[str, Any] | None = None
    writes: list[Write] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    return_status: bool = False  # reply with a Success Status (deletes, bindings)


def _copy(obj: Obj) -> Obj:
    try:
        result: Obj = orjson.loads(orjson.dumps(obj))
    except TypeError as err:  # orjson stops at 255 levels; a body from the requests log is not depth-checked
        if "Recursion limit" not in str(err):
            raise
        raise st.bad_request("couldn't get version/kind; json parse error: exceeded max depth") from err
    return result


def new_uid() -> str:
    """A random (version 4) UUID string, as ``str(uuid.uuid4())`` makes it, in a third of the time."""
    h = os.urandom(16).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


_VARIANT = "89ab"


def _spec_of(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


class CommitterCore:
    """Decides each request of a batch against the index (see module docstring)."""

    def __init__(
        self,
        *,
        admission: AdmissionChain | None = None,
        patcher: Patcher | None = None,
        decoder: Decoder | None = None,
        tracker: FieldTracker | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        new_uid: Callable[[], str] = new_uid,
        suffix: Callable[[], str] = random_suffix,
        request_id_window: int = 200_000,
    ) -> None:
        self.index = Index(request_id_window=request_id_window)
        self.decisions = Decisions()  # for chained requests: how the recent ones were decided
        self.admission = admission or AdmissionChain()
        self.patcher = patcher
        self.decoder = decoder
        self.tracker = tracker
        self.clock = clock
        self.new_uid = new_uid
        self.suffix = suffix
        self._owned = False

    # -- batch API ------------------------------------------------------------

    def process(self, requests: list[Request], *, owned: bool = False) -> list[Outcome]:
        """Decide a batch. ``owned``: the requests' bodies are the core's to change
        (the committer decoded them for this call alone), so they are not copied."""
        staged = Staged(self.index)
        batch: dict[str, Decision] = {}  # this batch's decisions, for requests chained within it
        self._owned = owned
        outcomes: list[Outcome] = []
        try:
            for req in requests:
                outcome = self.decide(req, staged, batch)
                batch[req.id] = _decision(outcome, self.decisions.get(req.id))
                outcomes.append(outcome)
            return outcomes
        finally:
            self._owned = False

    @staticmethod
    def stamp(outcomes: list[Outcome]) -> None:
        """Put each outcome's resourceVersion (its last write's offset) on its reply object."""
        for outcome in outcomes:
            if outcome.writes and outcome.object is not None:
                outcome.object = _with_rv(outcome.object, outcome.writes[-1].offset)

    def advance(self, outcomes: list[Outcome], position: int) -> None:
        """Apply committed writes to the index; ``position`` is the next offset of `objects`."""
        for outcome in outcomes:
            for w in outcome.writes:
                self.apply_record(w.key, w.type, w.object, w.offset, w.request_id)
            rid = outcome.request.id
            self.decisions.remember(rid, _decision(outcome, self.decisions.get(rid)))
        self.index.position = max(self.index.position, position)

    def apply_record(self, key: str, type_: str, obj: Obj, offset: int, request_id: str | None) -> None:
        """Apply one committed `objects` record (during recovery or after a commit)."""
        if type_ == "DELETED":
            self.index.delete(key)
        else:
            obj.get("metadata", {}).pop("resourceVersion", None)
            self.index.put(key, offset, obj)
        if request_id:
            self.index.remember_request(request_id, key)

    # -- one request ----------------------------------------------------------

    def decide(self, req: Request, staged: Staged, batch: dict[str, Decision] | None = None) -> Outcome:
        """One request against the batch so far; ``batch``: the decisions of its earlier requests."""
        self._decode_warnings: list[str] = []
        try:
            rt = registry.by_resource(req.group, req.resource)
            if rt is None:
                raise st.StatusError(
                    st.make_status(404, "NotFound", "the server could not find the requested resource")
                )
            seen = staged.seen_request(req.id)
            if seen is not None:
                return self._replay(req, staged, seen)
            if req.after:
                prior = (batch or {}).get(req.after) or self.decisions.get(req.after)
                check_chain(req, prior, staged.entry(req.key))
                if req.after_version:  # checked: the object is as `after` wrote it
                    req = _without_resource_version(req)
            subresource = str(req.options.get("subresource") or "")
            if req.op == "create" and subresource == "binding":
                outcome = self._bind(req, rt, staged)
            elif req.op == "create":
                outcome = self._create(req, rt, staged, req.object)
            elif req.op in ("update", "update_status"):
                outcome = self._update(req, rt, staged, req.object, status_only=req.op == "update_status")
            elif req.op == "patch":
                outcome = self._patch(req, rt, staged)
            else:
                outcome = self._delete(req, rt, staged)
        except st.StatusError as err:
            return Outcome(req, err.code, status=err.status)
        except Exception as exc:  # never let one request take the committer down
            log.exception("request failed", extra={"request_id": req.id, "key": req.key})
            internal = st.internal_error(str(exc))
            return Outcome(req, internal.code, status=internal.status)
        if outcome.writes:
            staged.request_ids[req.id] = outcome.writes[-1].key
        outcome.warnings = [*self._decode_warnings, *outcome.warnings]
        return outcome

    def _replay(self, req: Request, staged: Staged, key: str) -> Outcome:
        """A retried request that was already committed: answer without writing again.

        The answer carries the object the request wrote (found by the key it
        wrote, which for a generateName create is not the request's key), as
        it is now; a deleted object's answer is a Success status.
        """
        entry = staged.entry(key)
        if entry is None:
            return Outcome(req, 200, status=st.success_status(), return_status=True)
        return Outcome(req, 200, object=_with_rv(entry[1], entry[0]))

    # -- create ---------------------------------------------------------------

    def _create(self, req: Request, rt: ResourceType, staged: Staged, body: Obj | None) -> Outcome:
        if body is None:
            raise st.bad_request("a create request needs an object")
        obj = body if self._owned and body is req.object else _copy(body)
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise st.bad_request("metadata must be an object")
        namespace = self._namespace_for(req, rt, meta)
        check_create(staged, rt, namespace, str(meta.get("name") or ""))
        obj = self._ingest(rt, obj, req)
        meta = obj["metadata"]
        name = meta.get("name") or ""
        generate = meta.get("generateName") or ""
        if not name and not generate:
            raise st.invalid(rt.group, rt.kind, "", [required("metadata.name", "name or generateName is required")])
        for key in ("uid", "resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
            meta.pop(key, None)
        now = self.clock()
        meta["uid"] = self.new_uid()
        meta["creationTimestamp"] = time_text(now)
        if (rt.group, rt.plural) in HAS_GENERATION:
            meta["generation"] = 1
        _prepare_create_status(rt, obj)
        default_device_taint_times(rt, obj, lambda: str(meta["creationTimestamp"]))
        if not name:
            name = self._generate_name(rt, namespace, generate, staged)
            meta["name"] = name
        attrs = Attributes(
            "CREATE",
            rt,
            namespace,
            name,
            req.user,
            new=obj,
            options=req.options,
            dry_run=_dry(req),
            version=self._version(rt, req),
        )
        self.admission.admit(attrs, staged)
        obj = attrs.new or obj
        key = object_key(rt.group, rt.plural, namespace, name)
        if staged.entry(key) is not None:
            taken = st.generate_name_conflict if generate else st.already_exists
            raise taken(rt.group, rt.plural, name)
        self._track(None, obj, req, rt, "", now)
        return self._write(req, staged, key, "ADDED", obj, 201, attrs.warnings)

    def _namespace_for(self, req: Request, rt: ResourceType, meta: Obj) -> str:
        if not rt.namespaced:
            meta.pop("namespace", None)
            return ""
        given = meta.get("namespace") or ""
        if given and req.namespace and given != req.namespace:
            raise st.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        namespace = req.namespace or given
        if not namespace:
            raise st.bad_request("a namespace is required for namespaced resources")
        meta["namespace"] = namespace
        return namespace

    def _generate_name(self, rt: ResourceType, namespace: str, prefix: str, staged: Staged) -> str:
        base = prefix[:MAX_GENERATED_PREFIX_LENGTH]
        name = base
        for _ in range(GENERATE_NAME_RETRIES):
            name = base + self.suffix()
            if staged.entry(object_key(rt.group, rt.plural, namespace, name)) is None:
                return name
        raise st.generate_name_conflict(rt.group, rt.plural, name)

    # -- update ---------------------------------------------------------------

    def _update(
        self, req: Request, rt: ResourceType, staged: Staged, body: Obj | None, *, status_only: bool
    ) -> Outcome:
        if body is None:
            raise st.bad_request("an update request needs an object")
        if status_only and not rt.has_status:
            raise st.not_found(rt.group, f"{rt.plural}/status", req.name)
        entry = staged.entry(req.key)
        if entry is None:
            if not status_only and (rt.group, rt.plural) in CREATE_ON_UPDATE:
                return self._create(req, rt, staged, body)
            raise st.not_found(rt.group, rt.plural, req.name)
        current_rv, current = entry
        new = body if self._owned else _copy(body)
        meta = new.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise st.bad_request("metadata must be an object")
        if meta.get("name") and meta["name"] != req.name:
            raise st.bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL ({req.name})"
            )
        if rt.namespaced and meta.get("namespace") and meta["namespace"] != req.namespace:
            raise st.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        self._check_preconditions(rt, req, current_rv, current, meta.get("resourceVersion"), meta.get("uid"))
        new = self._ingest(rt, new, req, current=current)
        return self._commit_update(req, rt, staged, current_rv, current, new, status_only=status_only)

    def _check_preconditions(
        self, rt: ResourceType, req: Request, current_rv: int, current: Obj, rv: Any, uid: Any
    ) -> None:
        if rv and (current_rv == PENDING or str(rv) != str(current_rv)):
            raise st.modified_conflict(rt.group, rt.plural, req.name)
        current_uid = current["metadata"].get("uid")
        if uid and uid != current_uid:
            raise st.conflict(
                rt.group,
                rt.plural,
                req.name,
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: {current_uid}",
            )

    def _commit_update(
        self,
        req: Request,
        rt: ResourceType,
        staged: Staged,
        current_rv: int,
        current: Obj,
        new: Obj,
        *,
        status_only: bool,
    ) -> Outcome:
        cur_meta = current["metadata"]
        subresource = "status" if status_only else str(req.options.get("subresource") or "")
        if status_only:
            merged = _copy(current)
            merged["status"] = new.get("status")
            if merged["status"] is None:
                merged.pop("status")
            new = merged
        else:
            meta = new["metadata"]
            for key in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
                if key in cur_meta:
                    meta[key] = cur_meta[key]
                else:
                    meta.pop(key, None)
            meta["name"] = cur_meta["name"]
            if rt.namespaced:
                meta["namespace"] = cur_meta.get("namespace", "")
            if rt.has_status:
                if "status" in current:
                    new["status"] = current["status"]
                else:
                    new.pop("status", None)
            if (rt.group, rt.plural) == NAMESPACES and subresource != "finalize":
                _keep_spec_finalizers(new, current)  # only namespaces/finalize changes them
            if cur_meta.get("deletionTimestamp"):
                added = [f for f in meta.get("finalizers") or [] if f not in (cur_meta.get("finalizers") or [])]
                if added:
                    raise st.invalid(
                        rt.group,
                        rt.kind,
                        req.name,
                        [
                            forbidden(
                                "metadata.finalizers",
                                "no new finalizers can be added if the object is being deleted, "
                                f"found new finalizers {_go_strings(added)}",
                            )
                        ],
                    )
        default_device_taint_times(rt, new, lambda: time_text(self.clock()))
        if rt.kind == "DeviceTaintRule" and rt.group == RESOURCE_GROUP and not status_only:
            _taint_added_when_its_effect_changes(new, current, lambda: time_text(self.clock()))
        attrs = Attributes(
            "UPDATE",
            rt,
            req.namespace,
            req.name,
            req.user,
            subresource=subresource,
            old=current,
            new=new,
            options=req.options,
            dry_run=_dry(req),
            version=self._version(rt, req),
        )
        self.admission.admit(attrs, staged)
        new = attrs.new or new
        new["metadata"].pop("resourceVersion", None)
        if not status_only and (rt.group, rt.plural) in HAS_GENERATION and _spec_of(new) != _spec_of(current):
            new["metadata"]["generation"] = int(cur_meta.get("generation") or 0) + 1
        if _same_object(new, current):
            return Outcome(req, 200, object=_with_rv(current, current_rv), warnings=attrs.warnings)
        self._track(current, new, req, rt, subresource, self.clock())
        meta = new["metadata"]
        if (
            meta.get("deletionTimestamp")
            and not meta.get("finalizers")
            and not meta.get("deletionGracePeriodSeconds")
            and not ((rt.group, rt.plural) == NAMESPACES and namespaces.spec_finalizers(new))
        ):
            return self._write(req, staged, req.key, "DELETED", new, 200, attrs.warnings)
        return self._write(req, staged, req.key, "MODIFIED", new, 200, attrs.warnings)

    # -- patch ----------------------------------------------------------------

    def _patch(self, req: Request, rt: ResourceType, staged: Staged) -> Outcome:
        if self.patcher is None:
            raise st.StatusError(st.make_status(415, "UnsupportedMediaType", "patches are not supported"))
        patch_type = req.patch_type or "merge"
        entry = staged.entry(req.key)
        manager = str(req.options.get("fieldManager") or "")
        now = time_text(self.clock())
        force = bool(req.options.get("force"))
        subresource = str(req.options.get("subresource") or "")
        if entry is None:
            if patch_type != "apply":
                raise st.not_found(rt.group, rt.plural, req.name)
            created = self.patcher(
                rt=rt,
                current=None,
                patch=req.patch,
                patch_type=patch_type,
                manager=manager,
                force=force,
                now=now,
                subresource=subresource,
                version=self._version(rt, req),
            )
            if created.get("metadata") is None:
                created["metadata"] = {}
            if isinstance(created["metadata"], dict):
                created["metadata"].setdefault("name", req.name)
            self._patched_identity(rt, req, created)  # an apply that creates names the URL's object too
            return self._create(req, rt, staged, created)
        current_rv, current = entry
        version = self._version(rt, req)
        patched = self.patcher(
            rt=rt,
            current=self._in_version(rt, _copy(current), version),
            patch=req.patch,
            patch_type=patch_type,
            manager=manager,
            force=force,
            now=now,
            subresource=subresource,
            version=version,
        )
        meta = self._patched_identity(rt, req, patched)
        rv = meta.get("resourceVersion")
        if rv and str(rv) != str(current_rv):
            raise st.modified_conflict(rt.group, rt.plural, req.name)
        self._check_preconditions(rt, req, current_rv, current, None, meta.get("uid"))
        meta.pop("resourceVersion", None)
        patched = self._ingest(rt, patched, req, current=current)
        status_only = subresource == "status"
        return self._commit_update(req, rt, staged, current_rv, current, patched, status_only=status_only)

    def _patched_identity(self, rt: ResourceType, req: Request, patched: Obj) -> Obj:
        """The patched object's metadata, once it still names the object of the URL (kube's patcher checks).

        A patch that turns ``metadata`` (or its name or namespace) into the
        wrong JSON type gets the decoder's 400; one that moves the object to
        another namespace or name, or removes ``metadata``, gets Kubernetes'
        400 — instead of a success that silently dropped labels and the rest.
        """
        meta = patched.get("metadata")
        if meta is not None and not (
            isinstance(meta, dict)
            and isinstance(meta.get("name", ""), str)
            and isinstance(meta.get("namespace", ""), str)
        ):
            version = self._version(rt, req)
            self._decode(rt, {**patched, "apiVersion": rt.api_version_of(version), "kind": rt.kind}, req, version)
            raise st.bad_request(f"{rt.kind} in version {version!r} cannot be handled: metadata is not an object")
        if meta is None:
            meta = patched["metadata"] = {}
        namespace = meta.get("namespace") or ""
        if namespace != req.namespace:
            if not rt.namespaced:
                meta.pop("namespace", None)
            elif namespace:
                raise st.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
        name = meta.get("name") or ""
        if name != req.name:
            raise st.bad_request(f"the name of the object ({name}) does not match the name on the URL ({req.name})")
        return meta

    # -- delete ---------------------------------------------------------------

    def _delete(self, req: Request, rt: ResourceType, staged: Staged) -> Outcome:
        entry = staged.entry(req.key)
        if entry is None:
            raise st.not_found(rt.group, rt.plural, req.name)
        current_rv, current = entry
        pre = req.options.get("preconditions") or {}
        cur_meta = current["metadata"]
        if pre.get("uid") and pre["uid"] != cur_meta.get("uid"):
            raise st.conflict(
                rt.group,
                rt.plural,
                req.name,
                f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {cur_meta.get('uid')}",
            )
        if pre.get("resourceVersion") and str(pre["resourceVersion"]) != str(current_rv):
            raise st.conflict(
                rt.group,
                rt.plural,
                req.name,
                "Precondition failed: ResourceVersion in precondition: "
                f"{pre['resourceVersion']}, ResourceVersion in object meta: {current_rv}",
            )
        attrs = Attributes(
            "DELETE", rt, req.namespace, req.name, req.user, old=current, options=req.options, dry_run=_dry(req)
        )
        self.admission.admit(attrs, staged)
        if (rt.group, rt.plural) == NAMESPACES:
            if not cur_meta.get("deletionTimestamp"):
                return self._start_termination(req, staged, current, attrs.warnings)
            if namespaces.spec_finalizers(current):
                # The namespace controller has not finished: the DELETE answers the namespace as it is.
                return Outcome(req, 200, object=_with_rv(current, current_rv), warnings=attrs.warnings)
        new = _copy(current)
        meta = new["metadata"]
        finalizers = _gc_finalizers(req.options, list(meta.get("finalizers") or []))
        grace = self._grace_period(rt, current, req)
        now = self.clock()
        if cur_meta.get("deletionTimestamp"):
            # Already being deleted: a shorter grace period, or a grace of 0, may finish it.
            if grace == 0 and not finalizers:
                return self._finish_delete(req, rt, staged, new)
            shorter = _shortened_grace(cur_meta, req.options.get("gracePeriodSeconds"))
            if shorter is not None:
                meta["finalizers"] = finalizers
                if not finalizers:
                    meta.pop("finalizers")
                meta["deletionTimestamp"], meta["deletionGracePeriodSeconds"] = shorter
                return self._write(req, staged, req.key, "MODIFIED", new, 200, attrs.warnings)
            if finalizers != list(cur_meta.get("finalizers") or []):
                meta["finalizers"] = finalizers
                return self._write(req, staged, req.key, "MODIFIED", new, 200, attrs.warnings)
            return Outcome(req, 200, object=_with_rv(current, current_rv), warnings=attrs.warnings)
        if finalizers or grace:
            meta["finalizers"] = finalizers
            if not finalizers:
                meta.pop("finalizers")
            meta["deletionTimestamp"] = time_text(now + timedelta(seconds=grace or 0))
            meta["deletionGracePeriodSeconds"] = grace or 0
            return self._write(req, staged, req.key, "MODIFIED", new, 200, attrs.warnings)
        return self._finish_delete(req, rt, staged, new)

    def _start_termination(self, req: Request, staged: Staged, current: Obj, warnings: list[str]) -> Outcome:
        """A namespace's first DELETE (kube's namespace REST Delete): deletionTimestamp and phase Terminating.

        The namespace stays until its finalizers are gone; the propagation
        policy only sets or clears the orphan and foregroundDeletion finalizers.
        """
        new = _copy(current)
        meta = new["metadata"]
        meta["deletionTimestamp"] = time_text(self.clock())
        new.setdefault("status", {})["phase"] = namespaces.TERMINATING
        finalizers: list[str] = list(meta.get("finalizers") or [])
        for finalizer, wanted in _propagation_finalizers(req.options, finalizers).items():
            if wanted and finalizer not in finalizers:
                finalizers.append(finalizer)
            elif not wanted and finalizer in finalizers:
                finalizers.remove(finalizer)
        if finalizers:
            meta["finalizers"] = finalizers
        else:
            meta.pop("finalizers", None)
        return self._write(req, staged, req.key, "MODIFIED", new, 200, warnings)

    def _finish_delete(self, req: Request, rt: ResourceType, staged: Staged, obj: Obj) -> Outcome:
        outcome = self._write(req, staged, req.key, "DELETED", obj, 200, [])
        if (rt.group, rt.plural) not in RETURNS_DELETED_OBJECT:
            outcome.return_status = True
            outcome.status = st.success_status(
                {"name": req.name, "group": rt.group, "kind": rt.plural, "uid": obj["metadata"].get("uid")}
            )
        return outcome

    def _grace_period(self, rt: ResourceType, pod: Obj, req: Request) -> int:
        """Pods bound to a node and still running are deleted gracefully; the node agent finishes."""
        if (rt.group, rt.plural) != ("", "pods"):
            return 0
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            return 0
        given = req.options.get("gracePeriodSeconds")
        if given is not None:
            return 1 if int(given) < 0 else int(given)  # BeforeDelete: a negative grace period is one second
        return int(spec.get("terminationGracePeriodSeconds", 30))

    # -- pods/binding ----------------------------------------------------------

    def _bind(self, req: Request, rt: ResourceType, staged: Staged) -> Outcome:
        if (rt.group, rt.plural) != ("", "pods"):
            raise st.not_found(rt.group, f"{rt.plural}/binding", req.name)
        body = req.object or {}
        target = _binding_target(body)
        if not target:
            raise st.invalid("", "Binding", req.name, [required("target.name")])
        entry = staged.entry(req.key)
        if entry is None:
            raise st.not_found("", "pods", req.name)
        current = entry[1]
        check_create(staged, rt, req.namespace, req.name)
        node = current.get("spec", {}).get("nodeName")
        if node:
            raise st.conflict("", "pods/binding", req.name, f'pod {req.name} is already assigned to node "{node}"')
        if current["metadata"].get("deletionTimestamp"):
            raise st.conflict(
                "", "pods/binding", req.name, f"pod {req.name} is being deleted, cannot be assigned to a host"
            )
        attrs = Attributes(
            "CREATE",
            rt,
            req.namespace,
            req.name,
            req.user,
            subresource="binding",
            new=_copy(body),
            options=req.options,
            dry_run=_dry(req),
        )
        self.admission.admit(attrs, staged)
        new = _copy(current)
        new.setdefault("spec", {})["nodeName"] = target
        status = new.setdefault("status", {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": time_text(self.clock()),
            }
        )
        status["conditions"] = conditions
        outcome = self._write(req, staged, req.key, "MODIFIED", new, 201, attrs.warnings)
        outcome.return_status = True
        outcome.status = st.success_status()
        return outcome

    # -- helpers --------------------------------------------------------------

    def _decode(self, rt: ResourceType, obj: Obj, req: Request, version: str) -> Obj:
        if self.decoder is None:
            return obj
        validation = str(req.options.get("fieldValidation") or "Strict")
        decoded, warnings = self.decoder(rt, obj, field_validation=validation, version=version)
        self._decode_warnings.extend(warnings)
        return decoded

    @staticmethod
    def _version(rt: ResourceType, req: Request) -> str:
        """The version the request speaks: its own, or the storage version (components write that)."""
        version = req.version or rt.version
        # A view's qualified version (events.k8s.io/v1 for core Events) is one more version of the storage row.
        if version != rt.version and version not in rt.versions and version not in registry.view_versions(rt):
            raise st.StatusError(st.make_status(404, "NotFound", "the server could not find the requested resource"))
        return version

    @staticmethod
    def _in_version(rt: ResourceType, obj: Obj, version: str) -> Obj:
        """A stored object as ``version`` shows it (itself when that is the storage version)."""
        if version == rt.version:
            return obj
        return conversion.from_storage(obj, group=rt.group, kind=rt.kind, version=version)

    def _ingest(self, rt: ResourceType, obj: Obj, req: Request, *, current: Obj | None = None) -> Obj:
        """A body in the request's version, decoded strictly in that version and converted to the storage form.

        On an update (``current`` given) through a version that cannot express
        every stored field, those fields are kept from ``current``
        (`conversion.keep_unrepresentable`, docs/decisions/api-versions.md).
        """
        version = self._version(rt, req)
        obj["apiVersion"], obj["kind"] = rt.api_version_of(version), rt.kind
        obj = self._decode(rt, obj, req, version)
        if version == rt.version:
            return obj
        stored = conversion.to_storage(obj, group=rt.group, kind=rt.kind, version=version)
        if current is not None:
            stored = conversion.keep_unrepresentable(stored, current, group=rt.group, kind=rt.kind, version=version)
        stored["apiVersion"] = rt.api_version
        return stored

    def _track(
        self, old: Obj | None, new: Obj, req: Request, rt: ResourceType, subresource: str, now: datetime
    ) -> None:
        if self.tracker is None or req.op == "patch":
            return  # patches record their manager while they are applied
        manager = str(req.options.get("fieldManager") or "")
        if manager:
            api_version = rt.api_version_of(self._version(rt, req))
            self.tracker(
                old=old, new=new, manager=manager, api_version=api_version, subresource=subresource, now=time_text(now)
            )

    def _write(
        self, req: Request, staged: Staged, key: str, type_: EventType, obj: Obj, code: int, warnings: list[str]
    ) -> Outcome:
        if _dry(req):
            return Outcome(req, code, object=obj, warnings=warnings)
        staged.stage(key, None if type_ == "DELETED" else obj)
        return Outcome(req, code, object=obj, writes=[Write(key, type_, obj, req.id)], warnings=warnings)


def _binding_target(body: Any) -> str:
    """The node a Binding names; a body of the wrong shape is refused as Kubernetes' decoder refuses it."""
    cannot = 'Binding in version "v1" cannot be handled as a Binding: json: cannot unmarshal'
    if not isinstance(body, dict):
        raise st.bad_request(f"{cannot} {json_kind(body)} into Go value of type v1.Binding")
    target = body.get("target")
    if target is None:
        return ""
    if not isinstance(target, dict):
        raise st.bad_request(
            f"{cannot} {json_kind(target)} into Go struct field Binding.target of type v1.ObjectReference"
        )
    name = target.get("name")
    if name is not None and not isinstance(name, str):
        field = "ObjectReference.target.name"
        raise st.bad_request(f"{cannot} {json_kind(name)} into Go struct field {field} of type string")
    return name or ""


def _decision(outcome: Outcome, earlier: Decision | None) -> Decision:
    if earlier is not None and earlier.succeeded and outcome.code < 400 and not outcome.writes:
        return earlier  # a retry, answered from what it wrote the first time
    return Decision(outcome.code < 400, outcome.writes[-1] if outcome.writes else None)


def _without_resource_version(req: Request) -> Request:
    """The request with no resourceVersion precondition of its own (its chain's check replaced it)."""
    if req.object is None:
        return req
    meta = {k: v for k, v in (req.object.get("metadata") or {}).items() if k != "resourceVersion"}
    return replace(req, object={**req.object, "metadata": meta})


def _dry(req: Request) -> bool:
    dry = req.options.get("dryRun")
    return bool(dry) and dry != [] and dry != ""


def _with_rv(obj: Obj, offset: int) -> Obj:
    if offset == PENDING:
        return obj
    meta = dict(obj.get("metadata") or {})
    meta["resourceVersion"] = str(offset)
    return {**obj, "metadata": meta}


def _same_object(new: Obj, current: Obj) -> bool:
    """Nothing to write: the values and the field ownership are those stored (managers' times aside).

    An apply that changes no value but makes its manager a co-owner is a
    write, as in kube-apiserver, whose stored bytes then differ.
    """

    def strip(obj: Obj) -> Obj:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in ("resourceVersion", "managedFields")}
        managed = (obj.get("metadata") or {}).get("managedFields") or []
        owners = [{k: v for k, v in m.items() if k != "time"} if isinstance(m, dict) else m for m in managed]
        return {**obj, "metadata": meta, "owners": owners}

    return strip(new) == strip(current)


def _shortened_grace(meta: Obj, given: Any) -> tuple[str, int] | None:
    """A new (deletionTimestamp, deletionGracePeriodSeconds) when a DELETE shortens a pending grace period.

    Kubernetes' BeforeDelete (apiserver/pkg/registry/rest/delete.go): an
    object already being deleted gracefully may only have its grace period
    shortened; the deletion time moves by the difference. None when the
    request gives no grace period, or one that is not shorter, or when the
    pending deletion's time cannot be read.
    """
    current = meta.get("deletionGracePeriodSeconds")
    if given is None or not isinstance(current, int) or current <= 0:
        return None
    period = int(given)
    if period < 0:
        period = 1  # a negative grace period counts as one second on the delete path
    if period >= current:
        return None
    started = parse_time(meta.get("deletionTimestamp"))
    if started is None:
        return None
    return time_text(started - timedelta(seconds=current) + timedelta(seconds=period)), period


def _go_strings(values: list[str]) -> str:
    return "[]string{" + ", ".join(orjson.dumps(v).decode() for v in values) + "}"


def _prepare_create_status(rt: ResourceType, obj: Obj) -> None:
    """Per-kind status on create, as Kubernetes' strategies do it (and a namespace's ``kubernetes`` finalizer)."""
    kind = (rt.group, rt.plural)
    if kind in (("resource.k8s.io", "resourceclaims"), ("resource.k8s.io", "podschedulingcontexts")):
        obj.pop("status", None)
    elif kind == ("", "pods"):
        obj["status"] = {"phase": "Pending"}
    elif kind == NAMESPACES:
        obj["status"] = {"phase": namespaces.ACTIVE}
        obj["spec"] = namespaces.with_kubernetes_finalizer(obj.get("spec"))


def _taint_added_when_its_effect_changes(new: Obj, current: Obj, now: Callable[[], str]) -> None:
    """The DeviceTaintRule strategy's PrepareForUpdate (1.37): a new effect that kept the old ``timeAdded``
    gets ``now``, so that ``timeAdded`` says when the effect began (tolerationSeconds count from it)."""
    taint = _get_path(new, "spec", "taint")
    old = _get_path(current, "spec", "taint")
    if not isinstance(taint, dict) or not isinstance(old, dict) or taint.get("effect") == old.get("effect"):
        return
    if parse_time(taint.get("timeAdded")) == parse_time(old.get("timeAdded")):
        new["spec"] = {**new["spec"], "taint": {**taint, "timeAdded": now()}}


def _get_path(obj: Any, *keys: str) -> Any:
    for key in keys:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _keep_spec_finalizers(new: Obj, current: Obj) -> None:
    """The namespace strategy's PrepareForUpdate: spec.finalizers stay as they are."""
    spec = dict(new.get("spec") or {})
    kept = (current.get("spec") or {}).get("finalizers")
    if kept is None:
        spec.pop("finalizers", None)
    else:
        spec["finalizers"] = list(kept)
    if spec or "spec" in current:
        new["spec"] = spec
    else:
        new.pop("spec", None)


def _gc_finalizers(options: dict[str, Any], current: list[str]) -> list[str]:
    """The finalizers a DELETE leaves on an object: kube's deletionFinalizersForGarbageCollection.

    orphan: ``orphanDependents`` if given, else the propagation policy (Orphan), else the finalizer already
    there; foregroundDeletion: the policy (Foreground) unless ``orphanDependents`` is given, else the
    finalizer already there. Both are taken off and put back as decided, so ``Background`` (what kubectl
    sends by default) removes an orphan finalizer an earlier ``--cascade=orphan`` left.
    """
    orphan, foreground = ORPHAN_FINALIZER in current, FOREGROUND_FINALIZER in current
    orphan_dependents = options.get("orphanDependents")
    policy = options.get("propagationPolicy")
    if orphan_dependents is not None:
        orphan, foreground = bool(orphan_dependents), False
    elif policy in ("Orphan", "Background", "Foreground"):
        orphan, foreground = policy == "Orphan", policy == "Foreground"
    elif orphan and foreground:  # the first of the two on the object decides
        first = next(f for f in current if f in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER))
        orphan, foreground = first == ORPHAN_FINALIZER, first == FOREGROUND_FINALIZER
    kept = [f for f in current if f not in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)]
    wanted = kept + [ORPHAN_FINALIZER] * orphan + [FOREGROUND_FINALIZER] * foreground
    return current if set(wanted) == set(current) else wanted


def _propagation_finalizers(options: dict[str, Any], current: list[str]) -> dict[str, bool]:
    """Whether a namespace's first DELETE leaves the orphan and foregroundDeletion finalizers on it.

    kube's shouldHaveOrphanFinalizer / shouldHaveDeleteDependentsFinalizer:
    orphanDependents decides if given, else propagationPolicy, else what is there.
    """
    orphan, foreground = ORPHAN_FINALIZER in current, FOREGROUND_FINALIZER in current
    orphan_dependents = options.get("orphanDependents")
    policy = options.get("propagationPolicy")
    if orphan_dependents is not None:
        orphan, foreground = bool(orphan_dependents), not orphan_dependents
    elif policy is not None:
        orphan, foreground = policy == "Orphan", policy == "Foreground"
    return {ORPHAN_FINALIZER: orphan, FOREGROUND_FINALIZER: foreground}
