"""A whole draplane cluster for a test: `LocalStack` on a thread of its own, and what a test needs to use it.

Why a thread: the cluster must run while a test calls the (blocking)
``kubernetes`` client, whatever event loop the test itself uses or not. The
stack gets its own asyncio loop on a daemon thread; the test talks to it over
HTTP like any client, through the kubeconfig it writes.

    with running_cluster(ClusterOptions(nodes=2)) as cluster:
        cluster.apply("examples/gpu-test1.yaml")
        cluster.wait_for_pod_phase("pod0", namespace="gpu-test1", phase="Running")

Waiting is event driven: `DraplaneCluster.wait_for` lists the object, then
watches it from that resourceVersion until the condition holds, so a test
never sleeps.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
import shutil
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from services.kube.emulated_version import parse_emulated_version
from services.kube.feature_gates import FeatureGates
from services.testing.backends import DEFAULT_KAFKA_IMAGE, Backend, choose

if TYPE_CHECKING:
    from kubernetes.client import ApiClient
    from kubernetes.dynamic import DynamicClient

    from services.stack import LocalStack

Obj = dict[str, Any]
Condition = Callable[[Obj | None], bool]
FIELD_MANAGER = "draplane-pytest"


@dataclass(frozen=True)
class ClusterOptions:
    """What to start: node count, feature gates (kube's syntax) at an emulated release, the backend, the data."""

    nodes: int = 2
    feature_gates: str = ""
    emulated_version: str = ""  # --emulated-version: "" is today's (1.37), "1.31" the seeds'
    backend: str = "auto"  # auto | embedded | kafka | testcontainers (see services.testing.backends)
    data_dir: Path | None = None  # kept after the cluster stops when given; a temporary one otherwise
    kafka_image: str = DEFAULT_KAFKA_IMAGE
    start_timeout: float = 120.0


class WaitTimeout(AssertionError):
    """A wait ended before its condition held; the message shows the last state seen."""


@dataclass(kw_only=True)
class ClusterClient:
    """A draplane cluster seen over its API: clients, apply, get, delete, and event-driven waits.

    `DraplaneCluster` is one; `ClusterClient.from_kubeconfig` makes one for a
    cluster started elsewhere (``draplane up`` in another process).
    """

    url: str
    kubeconfig: Path
    discovery_cache: Path | None = None  # the dynamic client's discovery cache (default: kubernetes' own place)
    _clients: list[ApiClient] = field(default_factory=list, repr=False)
    _dynamic: DynamicClient | None = field(default=None, repr=False)

    @classmethod
    def from_kubeconfig(cls, kubeconfig: str | Path) -> ClusterClient:
        """For the current context's cluster of a kubeconfig (the one ``draplane up`` writes, say)."""
        path = Path(kubeconfig)
        doc = yaml.safe_load(path.read_text())
        current = next(c for c in doc["contexts"] if c["name"] == doc["current-context"])["context"]
        cluster = next(c for c in doc["clusters"] if c["name"] == current["cluster"])["cluster"]
        return cls(url=str(cluster["server"]), kubeconfig=path)

    # ----------------------------------------------------------- clients

    def api_client(self) -> ApiClient:
        """A new ``kubernetes.client.ApiClient`` for this cluster (from its kubeconfig); closed with the cluster."""
        from kubernetes import config

        client = config.new_client_from_config(config_file=str(self.kubeconfig))
        self._clients.append(client)
        return client

    def dynamic_client(self) -> DynamicClient:
        """A ``kubernetes.dynamic.DynamicClient`` (shared; discovery is cached in the data dir)."""
        if self._dynamic is None:
            from kubernetes.dynamic import DynamicClient

            cache = str(self.discovery_cache) if self.discovery_cache is not None else None
            self._dynamic = DynamicClient(self.api_client(), cache_file=cache)
        return self._dynamic

    def resource(self, kind: str, api_version: str | None = None) -> Any:
        """The dynamic client's resource for a kind, plural or short name (``pods``, ``ResourceClaim``, ``po``)."""
        from services.api.types import registry
        from services.replay.selection import resolve_kind

        group, plural = resolve_kind(kind)
        rt = registry.by_resource(group, plural)
        assert rt is not None
        if api_version is None:
            # The seeds' tests speak 1.31's v1alpha3 where a kind has it; otherwise the preferred version.
            version = registry.V1ALPHA3 if registry.V1ALPHA3 in rt.versions else rt.preferred_version
            api_version = rt.api_version_of(version)
        return self.dynamic_client().resources.get(api_version=api_version, kind=rt.kind)

    # ----------------------------------------------------------- objects

    def apply(self, manifest: str | Path | Obj | Iterable[Obj], *, namespace: str | None = None) -> list[Obj]:
        """Server-side apply every document of a manifest (a path, YAML text, a dict or dicts), like kubectl apply.

        Returns the objects as stored. ``namespace`` fills in documents of
        namespaced kinds that name none.
        """
        docs = _documents(manifest)
        applied: list[Obj] = []
        for doc in docs:
            res = self.dynamic_client().resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
            ns = (doc.get("metadata") or {}).get("namespace") or namespace or "default"
            out = res.server_side_apply(
                body=doc,
                namespace=ns if res.namespaced else None,
                field_manager=FIELD_MANAGER,
                force_conflicts=True,
            )
            applied.append(out.to_dict())
        return applied

    def get(self, kind: str, name: str, *, namespace: str | None = None) -> Obj | None:
        """The object now, or None."""
        from kubernetes.dynamic.exceptions import NotFoundError

        res = self.resource(kind)
        try:
            obj: Obj = res.get(name=name, namespace=namespace if res.namespaced else None).to_dict()
        except NotFoundError:
            return None
        return obj

    def delete(self, kind: str, name: str, *, namespace: str | None = None) -> None:
        """Delete an object (no error when it is already gone)."""
        from kubernetes.dynamic.exceptions import NotFoundError

        res = self.resource(kind)
        with contextlib.suppress(NotFoundError):
            res.delete(name=name, namespace=namespace if res.namespaced else None)

    # ----------------------------------------------------------- waiting

    def wait_for(
        self,
        kind: str,
        name: str,
        condition: Condition | None = None,
        *,
        namespace: str | None = None,
        timeout: float = 60.0,
        description: str = "",
    ) -> Obj | None:
        """Wait until ``condition(object)`` holds (default: the object exists); return the object.

        The condition gets None while the object does not exist, so
        ``lambda o: o is None`` waits for a deletion. Event driven: a list,
        then a watch from its resourceVersion (relisting after 410 Gone or a
        closed stream). Raises `WaitTimeout` with the last state seen.
        """
        check: Condition = condition or (lambda obj: obj is not None)

        def one(items: dict[tuple[str, str], Obj]) -> bool:
            return check(next(iter(items.values()), None))

        items = self._watch_until(
            kind,
            one,
            namespace=namespace,
            field_selector=f"metadata.name={name}",
            timeout=timeout,
            what=description or (condition.__name__ if condition is not None else "to exist"),
            subject=f"{namespace}/{name}" if namespace else name,
        )
        return next(iter(items.values()), None)

    def wait_for_list(
        self,
        kind: str,
        condition: Callable[[list[Obj]], bool],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        timeout: float = 60.0,
        description: str = "",
    ) -> list[Obj]:
        """Wait until ``condition(objects)`` holds for the objects of a kind (in a namespace, matching a selector)."""
        items = self._watch_until(
            kind,
            lambda found: condition(list(found.values())),
            namespace=namespace,
            label_selector=label_selector,
            timeout=timeout,
            what=description or getattr(condition, "__name__", "the condition"),
            subject=f"in {namespace}" if namespace else "",
        )
        return list(items.values())

    def _watch_until(
        self,
        kind: str,
        check: Callable[[dict[tuple[str, str], Obj]], bool],
        *,
        namespace: str | None,
        field_selector: str | None = None,
        label_selector: str | None = None,
        timeout: float,
        what: str,
        subject: str,
    ) -> dict[tuple[str, str], Obj]:
        """List, then watch from the list's resourceVersion, until ``check`` holds for the objects seen."""
        from kubernetes.client.exceptions import ApiException

        res = self.resource(kind)
        ns = namespace if res.namespaced else None
        selectors = {"field_selector": field_selector, "label_selector": label_selector}
        deadline = time.monotonic() + timeout
        items: dict[tuple[str, str], Obj] = {}
        while True:
            listed = res.get(namespace=ns, **selectors).to_dict()
            items = {_key(obj): obj for obj in listed.get("items") or []}
            if check(items):
                return items
            rv = (listed.get("metadata") or {}).get("resourceVersion")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                for event in res.watch(
                    namespace=ns, resource_version=rv, timeout=max(1, math.ceil(remaining)), **selectors
                ):
                    obj = event["raw_object"]
                    if event["type"] == "DELETED":
                        items.pop(_key(obj), None)
                    elif event["type"] in ("ADDED", "MODIFIED"):
                        items[_key(obj)] = obj
                    if check(items):
                        return items
                    if time.monotonic() >= deadline:
                        break
            except ApiException as exc:
                if exc.status != 410:  # 410 Gone: relist
                    raise
            if time.monotonic() >= deadline:
                break
        seen = "; ".join(f"{k[1]}: {_summary(v)}" for k, v in items.items()) or "nothing"
        raise WaitTimeout(f"{kind} {subject}: waited {timeout:g}s for {what}; last seen: {seen}")

    def wait_for_pod_phase(
        self, name: str, *, namespace: str = "default", phase: str = "Running", timeout: float = 60.0
    ) -> Obj:
        """Wait until a pod reaches ``phase`` (Running, Succeeded, ...)."""

        def in_phase(pod: Obj | None) -> bool:
            return pod is not None and (pod.get("status") or {}).get("phase") == phase

        pod = self.wait_for("pods", name, in_phase, namespace=namespace, timeout=timeout, description=f"phase {phase}")
        assert pod is not None
        return pod

    def wait_for_deleted(self, kind: str, name: str, *, namespace: str | None = None, timeout: float = 60.0) -> None:
        self.wait_for(kind, name, lambda o: o is None, namespace=namespace, timeout=timeout, description="deletion")

    def delete_namespace(self, name: str, *, timeout: float = 60.0) -> None:
        """Delete a namespace and wait until it is gone.

        As in Kubernetes, the namespace controller empties it first (pods
        first, so their claims' devices are free again before the claims go)
        and only then is the namespace itself removed.
        """
        self.delete("namespaces", name)
        self.wait_for_deleted("namespaces", name, timeout=timeout)

    # ----------------------------------------------------------- the rest

    def metrics(self) -> str:
        """The whole process's ``/metrics`` (Prometheus text)."""
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=10) as resp:
            text: str = resp.read().decode()
        return text

    def close_clients(self) -> None:
        for client in self._clients:
            with contextlib.suppress(Exception):
                client.close()
        self._clients.clear()
        self._dynamic = None


@dataclass(kw_only=True)
class DraplaneCluster(ClusterClient):
    """A cluster this process runs (see the module docstring): its API, its log, its nodes and the stack itself."""

    bus_url: str
    backend: str  # embedded | kafka | testcontainers
    backend_reason: str
    nodes: tuple[str, ...]
    data_dir: Path
    feature_gates: str
    stack: LocalStack = field(repr=False)


def _documents(manifest: str | Path | Obj | Iterable[Obj]) -> list[Obj]:
    if isinstance(manifest, dict):
        return [manifest]
    if isinstance(manifest, Path) or (isinstance(manifest, str) and "\n" not in manifest and Path(manifest).exists()):
        manifest = Path(manifest).read_text()
    if isinstance(manifest, str):
        return [doc for doc in yaml.safe_load_all(manifest) if doc]
    return list(manifest)


def _key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _summary(obj: Obj | None) -> str:
    if obj is None:
        return "absent"
    meta = obj.get("metadata") or {}
    status = obj.get("status")
    return f"resourceVersion {meta.get('resourceVersion')}, status {status!r}"[:2000]


class _StackThread:
    """The stack's event loop on a daemon thread: start, report readiness or failure, stop on request."""

    def __init__(self, stack: LocalStack) -> None:
        self.stack = stack
        self._started: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._main_task: asyncio.Task[Any] | None = None
        self._thread = threading.Thread(target=self._main, name="draplane-cluster", daemon=True)

    def start(self, timeout: float) -> None:
        self._thread.start()
        try:
            self._started.result(timeout)
        except BaseException:
            self.stop()
            raise

    def _main(self) -> None:
        asyncio.run(self._run())

    async def _run(self) -> None:
        self._stop = asyncio.Event()
        self._main_task = asyncio.current_task()
        self._loop = asyncio.get_running_loop()
        try:
            try:
                await self.stack.start()
                await self.stack.wait_ready()
            except BaseException as exc:
                if not self._started.done():
                    self._started.set_exception(exc)
                return
            self._started.set_result(None)
            await self._stop.wait()
        finally:
            await self.stack.stop()

    def _halt(self) -> None:
        """On the stack's loop: stop a running stack, or give up on one still starting."""
        assert self._stop is not None
        self._stop.set()
        if not self._started.done() and self._main_task is not None:
            self._main_task.cancel()

    def stop(self, timeout: float = 60.0) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nothing left to stop
                loop.call_soon_threadsafe(self._halt)
        self._thread.join(timeout)


@contextlib.contextmanager
def running_cluster(
    options: ClusterOptions | None = None, *, backend: Backend | None = None
) -> Iterator[DraplaneCluster]:
    """Start a cluster, yield it, stop it (and the backend it started, unless ``backend`` was given)."""
    from services.apiserver.kubeconfig import write_kubeconfig
    from services.stack import LocalStack, StackConfig, node_names

    options = options or ClusterOptions()
    gates = FeatureGates.parse(options.feature_gates, release=parse_emulated_version(options.emulated_version))
    own_backend = backend is None
    chosen = backend or choose(options.backend, kafka_image=options.kafka_image)
    # A short path: the drivers' unix sockets live under it (about 100 bytes at most).
    data = options.data_dir or Path(tempfile.mkdtemp(prefix="draplane-"))
    try:
        data.mkdir(parents=True, exist_ok=True)
        config = StackConfig(bus_url=chosen.bus_url(data), data_dir=data, port=0, nodes=options.nodes, gates=gates)
        stack = LocalStack(config)
        runner = _StackThread(stack)
        runner.start(options.start_timeout)
        try:
            kubeconfig = write_kubeconfig(data / "kubeconfig", stack.url)
            cluster = DraplaneCluster(
                url=stack.url,
                kubeconfig=kubeconfig,
                discovery_cache=data / "discovery-cache.json",
                bus_url=config.bus_url,
                backend=chosen.kind,
                backend_reason=chosen.reason,
                nodes=tuple(node_names(options.nodes)),
                data_dir=data,
                feature_gates=options.feature_gates,
                stack=stack,
            )
            try:
                yield cluster
            finally:
                cluster.close_clients()
        finally:
            runner.stop()
    finally:
        if own_backend:
            chosen.close()
        if options.data_dir is None:
            shutil.rmtree(data, ignore_errors=True)


def unique_name(prefix: str = "test") -> str:
    """A DNS-1123 name unlikely to meet another test's: ``prefix-1a2b3c4d``."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"
