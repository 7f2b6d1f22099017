"""The resourceclaim controller: one claim per templated pod claim, and claims released when pods finish.

Why this module exists: it is the I/O loop around the pure decisions in
`services.kube.resourceclaim`, `generated_claims`, `pod_claims` and `reserved_for`, following
Kubernetes 1.31's ``pkg/controller/resourceclaim``:

- **pods** (``pod:<ns>/<name>``): for each pod claim with a template, find the
  claim generated earlier (owner uid + pod-claim-name annotation, or the
  pre-1.28 name) or create one, and record the names in
  ``pod.status.resourceClaimStatuses`` with one status patch. The controller
  picks a created claim's name itself (as the committer would for its
  ``generateName``), so the creates and the status patch go as one chain of
  requests: one trip through the log instead of two. A pod that
  already has ``spec.nodeName`` gets its allocated claims reserved for it.
- **claims** (``claim:<ns>/<name>``): drop ``reservedFor`` entries of pods
  that are deleted, replaced or done; deallocate a claim nobody uses any more
  (structured: clear the allocation, then the delete-protection finalizer;
  classic: request deallocation from the driver); delete a generated claim
  whose pod is done.

Crash safety comes from the order of writes and from finding claims again:
the claim is created before the pod status names it (in the chain, the status
patch is applied only if the creates before it succeeded), and a retry (or a fresh
controller after a crash) finds the existing claim by owner and annotation.
A mutation cache covers a retry that runs before the informer has applied the
create. Keys go through the rate-limited `WorkQueue`; failures are retried
with per-key backoff.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from services.api.machinery import status as st
from services.api.types.registry import RESOURCE_GROUP
from services.controllers.gates import Gates, gate_enabled
from services.controllers.generated_claims import (
    claim_statuses_patch,
    find_generated_claim,
    new_claim_for_pod,
)
from services.controllers.metrics import ControllerMetrics
from services.controllers.mutation_cache import MutationCache, indexed
from services.controllers.object_edits import clone, with_status, without_finalizer
from services.controllers.pod_claims import (
    consumer_reference,
    is_pod_terminal,
    needs_reservation,
    pod_needs_claims,
    pod_needs_work,
)
from services.controllers.ports import EventRecorder, Writer
from services.controllers.reserved_for import (
    DELETE_PROTECTION_FINALIZER,
    MAX_DELETED_UIDS,
    UIDCache,
    Verdict,
    has_delete_protection,
    judge_consumer,
    plan_release,
    should_delete_generated,
)
from services.kube.feature_gates import DRA_ADMIN_ACCESS
from services.kube.resourceclaim import (
    ClaimNameError,
    ClaimNotFoundError,
    check_is_for_pod,
    claim_name,
    claim_pod_owner_uids,
    is_for_pod,
    owning_pod,
    pod_claim_keys,
)
from services.runtime.informer import Informer
from services.runtime.workers import run_workers
from services.runtime.workqueue import WorkQueue
from topics.declarations import OBJECTS

log = logging.getLogger(__name__)

Obj = dict[str, Any]

CONTROLLER_NAME = "resourceclaim-controller"
POD_KEY_PREFIX = "pod:"
CLAIM_KEY_PREFIX = "claim:"
FIELD_MANAGER = "ResourceClaimController"
"""The field manager of the pod-status writes, as in Kubernetes."""
POD_CLAIMS_INDEX = "resourceclaim-controller/pod-claims"
"""Pods by ``<namespace>/<claim>`` of the claims they use (``podResourceClaimIndex``)."""
CLAIM_OWNER_INDEX = "resourceclaim-controller/claim-pod-owner"
"""Claims by the uid of the pod that controls them (``claimPodOwnerIndex``)."""
DEFAULT_WORKERS = 512
"""Work items synced at once. A sync is mostly waiting for the committer (one round trip for a
templated pod: its claim creates and pod status go as one chain), and a worker is a coroutine, so
the count that keeps the committer's batches full is high: ``ops/bench/claims.py`` went from ~500
claims/s with 64 workers to ~1,100 with 512 (the committer and the controller-manager as separate
processes, 2 cores; measured before the chain)."""


class LogRecorder:
    """Records events as log lines (when no Event recorder is given)."""

    async def record(self, involved: Obj, type_: str, reason: str, message: str) -> None:
        meta = involved.get("metadata") or {}
        log.log(
            logging.WARNING if type_ == "Warning" else logging.INFO,
            "event",
            extra={
                "key": f"{meta.get('namespace', '')}/{meta.get('name', '')}",
                "kind": involved.get("kind", ""),
                "eventType": type_,
                "reason": reason,
                "note": message,
            },
        )


class SyncError(Exception):
    """A work item failed; it is retried with backoff."""


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta: Mapping[str, Any] = obj.get("metadata") or {}
    return meta


def _ref(obj: Mapping[str, Any]) -> str:
    meta = _meta(obj)
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


class ResourceClaimController:
    """See the module docstring. Construct, then ``await run()`` (cancel the task to stop)."""

    def __init__(
        self,
        informer: Informer,
        client: Writer,
        *,
        workers: int = DEFAULT_WORKERS,
        gates: Gates = None,
        metrics: ControllerMetrics | None = None,
        recorder: EventRecorder | None = None,
        deleted_uid_cache_size: int = MAX_DELETED_UIDS,
        catch_up: Callable[[], Awaitable[None]] | None = None,
        catch_up_timeout: float = 10.0,
        queue: WorkQueue[str] | None = None,
    ) -> None:
        self.informer = informer
        self.client = client
        self.workers = workers
        self.admin_access_enabled = gate_enabled(gates, DRA_ADMIN_ACCESS)
        self.metrics = metrics or ControllerMetrics()
        self.recorder: EventRecorder = recorder or LogRecorder()
        self.queue: WorkQueue[str] = queue or WorkQueue()
        self.pods = informer.store("", "pods")
        self.claims = informer.store(RESOURCE_GROUP, "resourceclaims")
        self.templates = informer.store(RESOURCE_GROUP, "resourceclaimtemplates")
        self.claim_cache = MutationCache(self.claims, indexers={CLAIM_OWNER_INDEX: claim_pod_owner_uids})
        self.deleted_pods = UIDCache(deleted_uid_cache_size)
        self._catch_up_hook = catch_up
        self._catch_up_timeout = catch_up_timeout
        self._registered = False

    # -- wiring ---------------------------------------------------------------

    def register(self) -> None:
        """Install indexes and handlers on the informer (idempotent); existing objects replay as adds."""
        if self._registered:
            return
        self._registered = True
        self.pods.add_index(POD_CLAIMS_INDEX, pod_claim_keys)
        self.claims.add_index(CLAIM_OWNER_INDEX, claim_pod_owner_uids)
        self.informer.add_handler("", "pods", _PodHandler(self))
        self.informer.add_handler(RESOURCE_GROUP, "resourceclaims", _ClaimHandler(self))
        self.informer.add_handler(RESOURCE_GROUP, "resourceclaimtemplates", _TemplateHandler(self))

    async def run(self) -> None:
        """Wait for the informer, then work the queue with ``workers`` workers until cancelled."""
        self.register()
        await self.informer.synced.wait()
        await run_workers(
            self.queue,
            self.sync,
            workers=self.workers,
            name=CONTROLLER_NAME,
            on_failure=self.metrics.sync_failed(CONTROLLER_NAME),
            expected=(SyncError, st.StatusError, ClaimNameError),
        )

    # -- event handlers (run inside the informer; they only enqueue) ---------

    def enqueue_pod(self, pod: Obj, *, deleted: bool) -> None:
        pod_claims = (pod.get("spec") or {}).get("resourceClaims") or ()
        # 1.37: the claim the scheduler made for extended resources is named in the status only.
        extended = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        if not pod_claims and not extended:
            return
        meta = _meta(pod)
        namespace = str(meta.get("namespace", ""))
        if deleted and meta.get("uid"):
            self.deleted_pods.add(str(meta["uid"]))
        needs_claims, _reason = pod_needs_claims(pod, deleted=deleted)
        if not needs_claims:
            # Release the reservations of a deleted or finished pod.
            for pod_claim in pod_claims:
                try:
                    name, _ = claim_name(pod, pod_claim)
                except ClaimNameError:
                    continue  # nothing was created, or the API changed (reported elsewhere)
                if name is not None:
                    self.queue.add(f"{CLAIM_KEY_PREFIX}{namespace}/{name}")
            if extended:
                self.queue.add(f"{CLAIM_KEY_PREFIX}{namespace}/{extended}")
            # Nothing else to do for it. Kubernetes 1.31 still asks pod_needs_work here, so a
            # finished pod whose generated claim was just deleted (by this controller, because
            # the pod is done) gets the claim created again, which is deleted again, and so on
            # for as long as the pod object exists (kubernetes#141274 is the same path for
            # reservations; its fix stops here too).
            return
        needs_work, _reason = pod_needs_work(pod, self.claims.get)
        if needs_work:
            self.queue.add(f"{POD_KEY_PREFIX}{namespace}/{meta.get('name', '')}")

    def enqueue_claim(self, old: Obj | None, new: Obj | None) -> None:
        self._count_claims(old, new)
        claim = new if new is not None else old
        assert claim is not None
        if new is not None:
            self.claim_cache.observed(new)
            # On start-up every claim is checked for stale reservedFor entries;
            # on updates a pod may have been added that no longer exists.
            self.queue.add(f"{CLAIM_KEY_PREFIX}{_ref(new)}")
        else:
            self.claim_cache.deleted(claim)
        # Pods using this claim may have work now (recreate it, reserve it).
        for pod in indexed(self.pods, POD_CLAIMS_INDEX, _ref(claim)):
            self.enqueue_pod(pod, deleted=False)

    def enqueue_template(self, template: Obj) -> None:
        """A template appeared or changed: pods waiting for it need not wait for their backoff."""
        meta = _meta(template)
        for pod in self.pods.list(str(meta.get("namespace", ""))):
            for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
                if pod_claim.get("resourceClaimTemplateName") == meta.get("name"):
                    self.enqueue_pod(pod, deleted=False)
                    break

    def _count_claims(self, old: Obj | None, new: Obj | None) -> None:
        def allocated(claim: Obj | None) -> bool:
            return claim is not None and (claim.get("status") or {}).get("allocation") is not None

        if old is None:
            self.metrics.resource_claims.inc()
        elif new is None:
            self.metrics.resource_claims.dec()
        if allocated(new) and not allocated(old):
            self.metrics.allocated_resource_claims.inc()
        elif allocated(old) and not allocated(new):
            self.metrics.allocated_resource_claims.dec()

    # -- work ---------------------------------------------------------------

    async def sync(self, key: str) -> None:
        """Process one work item (``pod:<ns>/<name>`` or ``claim:<ns>/<name>``)."""
        prefix, sep, rest = key.partition(":")
        namespace, slash, name = rest.partition("/")
        if not sep or not slash:
            raise SyncError(f"unexpected key: {key}")
        if prefix + ":" == POD_KEY_PREFIX:
            await self.sync_pod(namespace, name)
        elif prefix + ":" == CLAIM_KEY_PREFIX:
            await self.sync_claim(namespace, name)
        else:
            raise SyncError(f"unexpected key prefix: {prefix}:")

    async def sync_pod(self, namespace: str, name: str) -> None:
        pod = self.pods.get(namespace, name)
        if pod is None:
            log.debug("nothing to do for pod, it is gone", extra={"key": f"{namespace}/{name}"})
            return
        if _meta(pod).get("deletionTimestamp"):
            log.debug("nothing to do for pod, it is marked for deletion", extra=_log_ctx(pod))
            return
        if is_pod_terminal(pod):
            # Queued while it still ran: a finished pod needs no claim created or reserved.
            log.debug("nothing to do for pod, it has terminated", extra=_log_ctx(pod))
            return
        new_names: dict[str, str] = {}
        creates: list[tuple[Mapping[str, Any], Obj]] = []
        for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
            try:
                new = self._handle_claim(pod, pod_claim, new_names)
            except (SyncError, st.StatusError, ClaimNameError) as err:
                if creates:  # kube's controller has created the claims before this one, and records none
                    await self._create_and_record(pod, creates, None)
                raise await self._creation_failed(pod, pod_claim, err) from err
            if new is not None:
                creates.append((pod_claim, new))
        if new_names:
            pod = await self._create_and_record(pod, creates, new_names)
        if not (pod.get("spec") or {}).get("nodeName"):
            return  # the scheduler reserves claims
        for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
            claim_name_, check_owner = claim_name(pod, pod_claim)
            if claim_name_ is None:
                continue
            claim = self.claim_cache.get(namespace, claim_name_)
            if claim is None:
                return
            if check_owner:
                check_is_for_pod(pod, claim)
            if needs_reservation(pod, claim):
                await self._reserve_for_pod(pod, claim)

    async def _creation_failed(self, pod: Obj, pod_claim: Mapping[str, Any], err: Exception) -> SyncError:
        """Record FailedResourceClaimCreation for ``pod_claim``; the error that fails the sync."""
        await self.recorder.record(
            pod, "Warning", "FailedResourceClaimCreation", f"PodResourceClaim {pod_claim.get('name')}: {err}"
        )
        return SyncError(f"pod {_ref(pod)}, PodResourceClaim {pod_claim.get('name')}: {err}")

    def _handle_claim(self, pod: Obj, pod_claim: Mapping[str, Any], new_names: dict[str, str]) -> Obj | None:
        """Note in ``new_names`` the claim ``pod_claim`` uses when the pod status does not record it yet;
        return the claim to create for it (None: no claim to create)."""
        namespace = str(_meta(pod).get("namespace", ""))
        try:
            recorded, must_check_owner = claim_name(pod, pod_claim)
        except ClaimNotFoundError:
            pass  # not created (or not recorded) yet: continue below
        except ClaimNameError as err:
            raise SyncError(f"checking for claim before creating it: {err}") from err
        else:
            if recorded is None:
                return None  # no claim needed
            if recorded:
                existing = self.claim_cache.get(namespace, recorded)
                if existing is not None:
                    if not must_check_owner or is_for_pod(pod, existing):
                        return None  # already created
                    log.error(
                        "claim that was created for the pod is no longer owned by the pod, creating a new one",
                        extra={**_log_ctx(pod), "podClaim": pod_claim.get("name"), "resourceClaim": recorded},
                    )
        template_name = pod_claim.get("resourceClaimTemplateName")
        if template_name is None:
            return None
        # Before creating a claim, look for one created earlier whose pod status
        # write failed (or that an older release created with a fixed name).
        owned = self.claim_cache.by_index(CLAIM_OWNER_INDEX, str(_meta(pod).get("uid", "")))
        found = find_generated_claim(pod, pod_claim, owned)
        if found is not None:
            new_names[str(pod_claim.get("name", ""))] = str(_meta(found).get("name", ""))
            return None
        template = self.templates.get(namespace, str(template_name))
        if template is None:
            raise SyncError(
                f'resource claim template "{template_name}": '
                f'resourceclaimtemplates.resource.k8s.io "{template_name}" not found'
            )
        try:
            new = new_claim_for_pod(pod, pod_claim, template, admin_access_enabled=self.admin_access_enabled)
        except Exception as err:
            raise SyncError(str(err)) from err
        new_names[str(pod_claim.get("name", ""))] = str(new["metadata"]["name"])
        return new

    async def _create_and_record(
        self, pod: Obj, creates: list[tuple[Mapping[str, Any], Obj]], new_names: Mapping[str, str] | None
    ) -> Obj:
        """Create the claims and record ``new_names`` in the pod status (None: record nothing): one chain.

        The committer applies the pod-status patch only if every create before
        it succeeded, so the status never names a claim that does not exist; a
        claim created whose status write failed is found again on the next
        sync (`find_generated_claim`). The claims' names were picked here
        (`new_claim_for_pod`), so both are decided in one trip through the log.
        """
        meta = _meta(pod)
        namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
        requests = [
            self.client.request("create", RESOURCE_GROUP, "resourceclaims", namespace, new["metadata"]["name"], obj=new)
            for _, new in creates
        ]
        if new_names is not None:
            requests.append(
                self.client.request(
                    "patch",
                    "",
                    "pods",
                    namespace,
                    name,
                    patch=claim_statuses_patch(pod, new_names),
                    patch_type="strategic",
                    options={"subresource": "status", "fieldManager": FIELD_MANAGER},
                )
            )
        results = await self.client.write_chain(requests)  # a timeout is every request's answer
        failed: tuple[Mapping[str, Any], Obj, st.StatusError] | None = None
        for (pod_claim, new), result in zip(creates, results, strict=False):
            self.metrics.create_attempts.inc()
            if isinstance(result, st.StatusError):
                # The committer refused the rest of the chain unapplied: not attempts, as kube's
                # controller makes none after the first failed create of a sync.
                self.metrics.create_failures.inc()
                failed = (pod_claim, new, result)
                break
            log.info("created ResourceClaim", extra={**_log_ctx(result), "pod": _ref(pod)})
            self.claim_cache.mutation(result)
        if failed is not None:
            pod_claim, new, refused = failed
            create_error = SyncError(f"create ResourceClaim {new['metadata'].get('name', '')}: {refused}")
            raise await self._creation_failed(pod, pod_claim, create_error) from refused
        if new_names is None:
            return pod
        recorded = results[-1]
        if isinstance(recorded, st.StatusError):
            raise SyncError(f"update pod {namespace}/{name} ResourceClaimStatuses: {recorded}") from recorded
        log.info("recorded ResourceClaims in pod status", extra={**_log_ctx(recorded), "claims": dict(new_names)})
        return recorded

    async def _reserve_for_pod(self, pod: Obj, claim: Obj) -> None:
        new: Obj = clone(claim)
        status = new.setdefault("status", {})
        status["reservedFor"] = [*(status.get("reservedFor") or []), consumer_reference(pod)]
        try:
            updated = await self.client.update_status(RESOURCE_GROUP, "resourceclaims", new)
        except st.StatusError as err:
            raise SyncError(f"reserve claim {_ref(claim)} for pod: {err}") from err
        self.claim_cache.mutation(updated)
        log.info("reserved claim for pod", extra={**_log_ctx(updated), "pod": _ref(pod)})

    async def sync_claim(self, namespace: str, name: str) -> None:
        claim = self.claims.get(namespace, name)
        if claim is None:
            log.debug("nothing to do for claim, it is gone", extra={"key": f"{namespace}/{name}"})
            return
        valid: list[Obj] = []
        caught_up = False
        for entry in (claim.get("status") or {}).get("reservedFor") or ():
            pod_name = str(entry.get("name", ""))
            judgement = judge_consumer(
                entry, pod=self.pods.get(namespace, pod_name), deleted_uids=self.deleted_pods, caught_up=caught_up
            )
            if judgement.verdict is Verdict.CONFIRM:
                # Not in the cache and not seen deleted: be sure before removing a
                # reservation the scheduler may have just made.
                await self._catch_up()
                caught_up = True
                judgement = judge_consumer(
                    entry, pod=self.pods.get(namespace, pod_name), deleted_uids=self.deleted_pods, caught_up=True
                )
            if judgement.verdict is Verdict.KEEP:
                valid.append(entry)
            else:
                log.debug(
                    "remove reservation",
                    extra={**_log_ctx(claim), "pod": f"{namespace}/{pod_name}", "reason": judgement.reason},
                )
        release = plan_release(claim, valid)
        current = claim
        if release.status is not None:
            new_status = with_status(claim, release.status)
            current = await self.client.update_status(RESOURCE_GROUP, "resourceclaims", new_status)
            log.info(
                "released claim",
                extra={**_log_ctx(current), "reservedFor": len(valid), "allocated": "allocation" in release.status},
            )
        if (
            release.remove_finalizer
            and has_delete_protection(current)
            and (current.get("status") or {}).get("allocation") is None
        ):
            current = await self.client.update(
                RESOURCE_GROUP, "resourceclaims", without_finalizer(current, DELETE_PROTECTION_FINALIZER)
            )
        if valid:
            return
        owner = owning_pod(current)
        if owner is None:
            return
        pod = self.pods.get(namespace, owner[0])
        delete, reason = should_delete_generated(current, pod=pod, deleted_uids=self.deleted_pods)
        if not delete:
            return
        log.info("deleting unused generated claim", extra={**_log_ctx(current), "reason": reason})
        try:
            await self.client.delete(
                RESOURCE_GROUP, "resourceclaims", namespace, name, preconditions={"uid": _meta(claim).get("uid")}
            )
        except st.StatusError as err:
            if err.code not in (404, 409):
                raise SyncError(f"delete claim {namespace}/{name}: {err}") from err

    async def _catch_up(self) -> None:
        """Read the log up to its current end: afterwards the stores are as fresh as a live read."""
        if self._catch_up_hook is not None:
            await self._catch_up_hook()
            return
        end = await self.informer.bus.end_offset(OBJECTS)
        if end > 0:
            await self.informer.wait_for(end - 1, timeout=self._catch_up_timeout)


def _log_ctx(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = _meta(obj)
    return {"key": _ref(obj), "resourceVersion": meta.get("resourceVersion")}


class _PodHandler:
    def __init__(self, controller: ResourceClaimController) -> None:
        self.c = controller

    def on_add(self, obj: Obj) -> None:
        self.c.enqueue_pod(obj, deleted=False)

    def on_update(self, old: Obj, new: Obj) -> None:
        self.c.enqueue_pod(new, deleted=False)

    def on_delete(self, obj: Obj) -> None:
        self.c.enqueue_pod(obj, deleted=True)


class _ClaimHandler:
    def __init__(self, controller: ResourceClaimController) -> None:
        self.c = controller

    def on_add(self, obj: Obj) -> None:
        self.c.enqueue_claim(None, obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self.c.enqueue_claim(old, new)

    def on_delete(self, obj: Obj) -> None:
        self.c.enqueue_claim(obj, None)


class _TemplateHandler:
    def __init__(self, controller: ResourceClaimController) -> None:
        self.c = controller

    def on_add(self, obj: Obj) -> None:
        self.c.enqueue_template(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self.c.enqueue_template(new)

    def on_delete(self, obj: Obj) -> None:
        pass
