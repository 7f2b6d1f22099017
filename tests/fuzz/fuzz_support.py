"""What every fuzz test shares: the target server, the answer check, the case count and the settings.

The properties every answer must have, whatever was sent:
- never a 5xx (a 500 means an exception escaped somewhere; a 504 means a
  write never came back);
- every 4xx is a Kubernetes ``Status`` (``kind: Status``, ``status: Failure``,
  ``code`` equal to the HTTP status, a non-empty ``reason`` and ``message``),
  and a 422 names the offending fields in ``details.causes[].field`` (except
  Kubernetes' generic 422 for a patch that does not apply, which has none);
- every 2xx is a JSON object.

Hypothesis runs derandomized (a fixed seed derived from each test) with no
example database, so CI runs the same cases every time. The number of cases
is printed at the end of the run; ``DRAPLANE_FUZZ_SCALE`` multiplies every
test's example count for longer runs by hand.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import aiohttp
import orjson
import yaml
import yarl
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from services.api import protobuf
from services.api.machinery.patch.errors import GENERIC_422_MESSAGE
from services.api.types import registry
from services.api.types.registry import ResourceType

# Cases sent to the REST API (and pure property checks), by test; answers by (test, HTTP status).
CASES: Counter[str] = Counter()
CODES: Counter[tuple[str, int]] = Counter()
SCALE = float(os.environ.get("DRAPLANE_FUZZ_SCALE", "1"))
NS = "fuzz"
# The fuzz namespace as it is created: at 1.37 (the default release) the base manifests' adminAccess requests need
# the admin-access label on the namespace (pkg/registry/resource/utils.go).
NS_OBJECT = {"metadata": {"name": NS, "labels": {"resource.kubernetes.io/admin-access": "true"}}}
FIXTURE = "fuzz-fixture"  # one object of every kind is seeded with this name (the namespace: FIXTURE-ns)


def one_in(n: int) -> st.SearchStrategy[bool]:
    """True about once in ``n`` draws. Not ``integers(0, n - 1) == 0``: hypothesis favours the simplest value."""
    return st.integers(0, n - 1).map(lambda i: i == n // 2)


def fuzz_settings(examples: int) -> settings:
    """Reproducible settings: derandomized, no database, no deadline (the server sets the pace)."""
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.large_base_example,
            HealthCheck.function_scoped_fixture,
        ],
    )


# The fuzzers speak 1.31's wire form (`valid_objects`): each row as a v1alpha3 client sees it, so paths,
# apiVersions and models are v1alpha3's; the committer converts to the storage form. DeviceTaintRule has
# no 1.31 form and no strategies here; of core/v1 only the kinds DRA works with are fuzzed (the kinds
# stored for upstream kube-scheduler have no strategies).
FUZZED_CORE_KINDS = frozenset({"Namespace", "Node", "Pod", "Event"})
RESOURCES: tuple[ResourceType, ...] = tuple(
    dataclasses.replace(rt, version=registry.V1ALPHA3, stored_as="") if rt.group else rt
    for rt in registry.RESOURCES
    if (not rt.group and rt.kind in FUZZED_CORE_KINDS) or (rt.group and registry.V1ALPHA3 in rt.versions)
)
KINDS = [rt.kind for rt in RESOURCES]


def rt_of(kind: str) -> ResourceType:
    return next(rt for rt in RESOURCES if rt.kind == kind)


def pct(value: str) -> str:
    """Percent-encoding of any text, lone surrogates included (as the bytes a sloppy client would send)."""
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


def collection_path(rt: ResourceType, namespace: str = NS) -> str:
    prefix = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    if rt.namespaced:
        return f"{prefix}/namespaces/{quote(namespace, safe='')}/{rt.plural}"
    return f"{prefix}/{rt.plural}"


def object_path(rt: ResourceType, name: str, subresource: str = "", *, namespace: str = NS) -> str:
    path = f"{collection_path(rt, namespace)}/{quote(name, safe='')}"
    return f"{path}/{subresource}" if subresource else path


@dataclass
class Answer:
    method: str
    path: str
    status: int
    body: bytes
    doc: Any

    def describe(self) -> str:
        return f"{self.method} {self.path} -> {self.status}: {self.body[:600]!r}"


class FuzzApi:
    """A running apiserver and a session to it, as an admin (``system:masters``)."""

    def __init__(self, url: str, session: aiohttp.ClientSession) -> None:
        self.url = url
        self.session = session

    async def send(
        self,
        case: str,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        content_type: str | None = None,
        query: str = "",
        headers: dict[str, str] | None = None,
    ) -> Answer:
        """One fuzz case: send it and check the answer's general properties."""
        CASES[case] += 1
        answer = await self.request(method, path, body=body, content_type=content_type, query=query, headers=headers)
        CODES[(case, answer.status)] += 1
        check_answer(answer)
        return answer

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        content_type: str | None = None,
        query: str = "",
        headers: dict[str, str] | None = None,
    ) -> Answer:
        sent = dict(headers or {})
        if content_type is not None:
            sent["Content-Type"] = content_type
        target = path + (f"?{query}" if query else "")
        # encoded=True: the path and query go out exactly as built (fuzzed escapes included).
        url = yarl.URL(self.url + target, encoded=True)
        async with self.session.request(method, url, data=body, headers=sent) as resp:
            raw = await resp.read()
            status = resp.status
            media = resp.content_type
        return Answer(method, target, status, raw, parse_body(raw, media))

    async def json(self, method: str, path: str, obj: Any = None, *, content_type: str = "application/json") -> Any:
        """A request the test needs to succeed (setup, liveness); returns the decoded body."""
        body = None if obj is None else orjson.dumps(obj)
        answer = await self.request(method, path, body=body, content_type=content_type if body else None)
        assert answer.status < 300, answer.describe()
        return answer.doc


PLAIN_TEXT_PATHS = frozenset({"/healthz", "/livez", "/readyz"})  # "ok", as in Kubernetes


def parse_body(raw: bytes, media: str) -> Any:
    """A response body as data (JSON, YAML or protobuf, as the client asked), None when it is none of them."""
    if not raw:
        return None
    if "protobuf" in media:
        try:
            return protobuf.decode(raw)
        except protobuf.ProtobufError:
            return None
    try:
        return yaml.safe_load(raw) if "yaml" in media else orjson.loads(raw)
    except (orjson.JSONDecodeError, yaml.YAMLError):
        return None


def check_answer(answer: Answer) -> None:
    assert answer.status < 500, answer.describe()
    if answer.method == "HEAD" or answer.status == 304:
        return
    if answer.status >= 400:
        check_status(answer)
    elif answer.status >= 200 and answer.path.split("?", 1)[0] not in PLAIN_TEXT_PATHS:
        if answer.doc is None and "/watch/" in answer.path:
            # A watch answers a stream: one JSON watch event a line (several when several objects exist).
            events = [parse_body(line, "application/json") for line in answer.body.splitlines() if line.strip()]
            assert events and all(isinstance(e, dict) and "type" in e for e in events), answer.describe()
            return
        assert isinstance(answer.doc, dict), answer.describe()


def check_status(answer: Answer) -> None:
    doc = answer.doc
    assert isinstance(doc, dict), answer.describe()
    assert doc.get("kind") == "Status" and doc.get("apiVersion") == "v1", answer.describe()
    assert doc.get("status") == "Failure" and doc.get("code") == answer.status, answer.describe()
    assert isinstance(doc.get("reason"), str) and doc["reason"], answer.describe()
    assert isinstance(doc.get("message"), str) and doc["message"], answer.describe()
    if answer.status == 422 and not (answer.method == "PATCH" and doc["message"] == GENERIC_422_MESSAGE):
        causes = (doc.get("details") or {}).get("causes")
        assert isinstance(causes, list) and causes, answer.describe()
        assert all(isinstance(c, dict) and isinstance(c.get("field"), str) for c in causes), answer.describe()
        assert any(c["field"] for c in causes), answer.describe()
