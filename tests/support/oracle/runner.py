"""Playing a scenario against one target: kubectl with its kubeconfig, HTTP with the same credentials.

Why this module exists: both servers must see byte-for-byte the same
requests, in the same order, in a namespace of the same name; this module is
the one place that turns a step into a request and its answer into a capture
(exit code and output lines of kubectl; status, chosen headers and body of
HTTP). Captures are normalised (`normalise`) once the whole scenario has run,
so values captured late still replace their earlier appearances.
"""

from __future__ import annotations

import base64
import json
import ssl
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
import yaml
from requests.adapters import HTTPAdapter

from tests.support.kubectl import DISPATCHER
from tests.support.oracle import normalise
from tests.support.oracle.scenario import HttpStep, KubectlStep, Scenario, dig, substitute

KUBECTL_TIMEOUT = 60.0
HTTP_TIMEOUT = 30.0


class _ContextAdapter(HTTPAdapter):
    """An adapter whose connections use one given SSL context."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self._context = context
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["ssl_context"] = self._context
        super().init_poolmanager(*args, **kwargs)


@dataclass
class Target:
    """A server the suite talks to, known by its kubeconfig (token or client-certificate credentials)."""

    name: str
    kubeconfig: Path
    home: Path  # kubectl's $HOME: its discovery cache is the target's own
    url: str = ""
    _session: requests.Session | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        cfg = yaml.safe_load(self.kubeconfig.read_text())
        context = next(c["context"] for c in cfg["contexts"] if c["name"] == cfg["current-context"])
        cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == context["cluster"])
        user = next(u["user"] for u in cfg["users"] if u["name"] == context["user"])
        self.url = cluster["server"].rstrip("/")
        files = self.home / "http-credentials"
        files.mkdir(parents=True, exist_ok=True)
        session = requests.Session()
        session.trust_env = False  # no proxies or CA bundles from the environment
        # The standard library's context, as kubectl and Go verify: urllib3's own one is X509-strict and
        # refuses draplane's self-signed serving certificate.
        ca = self._file(cluster, "certificate-authority", files / "ca.crt")
        context = ssl.create_default_context(cafile=ca) if ca else ssl._create_unverified_context()
        cert = self._file(user, "client-certificate", files / "client.crt")
        key = self._file(user, "client-key", files / "client.key")
        if cert and key:
            context.load_cert_chain(cert, key)
        session.mount("https://", _ContextAdapter(context))
        if user.get("token"):
            session.headers["Authorization"] = f"Bearer {user['token']}"
        self._session = session

    def _file(self, section: dict[str, Any], key: str, dest: Path) -> str | None:
        if section.get(f"{key}-data"):
            dest.write_bytes(base64.b64decode(section[f"{key}-data"]))
            return str(dest)
        path = section.get(key)
        return str(path) if path else None

    @property
    def session(self) -> requests.Session:
        assert self._session is not None
        return self._session

    def kubectl(self, args: list[str], *, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {"KUBECONFIG": str(self.kubeconfig), "HOME": str(self.home), "PATH": "/usr/bin:/bin"}
        return subprocess.run(
            [DISPATCHER, *args], input=stdin, capture_output=True, text=True, env=env, timeout=KUBECTL_TIMEOUT
        )

    def ensure_namespace(self, name: str) -> None:
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        r = self.session.post(f"{self.url}/api/v1/namespaces", json=body, timeout=HTTP_TIMEOUT)
        if r.status_code not in (201, 409):
            raise AssertionError(f"{self.name}: creating namespace {name}: {r.status_code} {r.text}")


@dataclass
class Run:
    """One scenario's raw captures on one target, and the variables it captured."""

    target: Target
    captures: list[dict[str, Any]]
    variables: dict[str, str]

    def normalised(self) -> dict[str, Any]:
        ctx = normalise.Context(
            server=self.target.url, variables={k: v for k, v in self.variables.items() if k != "NS"}
        )
        steps = []
        for cap in self.captures:
            out = {}
            for key, val in cap.items():
                if key in ("stdout", "stderr", "text") and isinstance(val, str):
                    out[key] = normalise.kubectl_text(val, ctx)
                else:
                    out[key] = normalise.value(val, ctx)
            steps.append(out)
        return {"steps": steps}


def _parse(output: str, kind: str) -> Any:
    try:
        return json.loads(output) if kind == "json" else yaml.safe_load(output)
    except (ValueError, yaml.YAMLError):
        return output


def _kubectl(target: Target, step: KubectlStep, variables: dict[str, str]) -> tuple[dict[str, Any], Any]:
    args = list(substitute(step.args, variables))
    if step.namespace:
        args.append(f"--namespace={variables['NS']}")
    stdin = substitute(step.stdin, variables) if step.stdin is not None else None
    proc = target.kubectl(args, stdin=stdin)
    capture: dict[str, Any] = {"kubectl": " ".join(step.args), "exit": proc.returncode}
    parsed: Any = None
    if step.output != "text" and proc.returncode == 0:
        parsed = _parse(proc.stdout, step.output)
        capture["parsed"] = parsed
    else:
        capture["stdout"] = proc.stdout
    if not step.ignore_stderr:
        capture["stderr"] = proc.stderr
    return capture, parsed


def _http(target: Target, step: HttpStep, variables: dict[str, str]) -> tuple[dict[str, Any], Any]:
    path = substitute(step.path, variables)
    headers = substitute(dict(step.headers), variables)
    data: bytes | None = None
    if step.body is not None:
        body = substitute(step.body, variables)
        data = body.encode() if step.raw and isinstance(body, str) else json.dumps(body).encode()
        headers.setdefault("Content-Type", step.content_type or "application/json")
    r = target.session.request(step.method, target.url + path, data=data, headers=headers, timeout=HTTP_TIMEOUT)
    capture: dict[str, Any] = {"http": f"{step.method} {step.path}", "status": r.status_code}
    capture["headers"] = {h: r.headers.get(h) for h in step.compare_headers}
    parsed: Any
    if step.watch and r.status_code == 200:
        parsed = [json.loads(line) for line in r.text.splitlines() if line.strip()]
        capture["events"] = parsed
    else:
        try:
            parsed = r.json() if r.content else None
            capture["body"] = parsed
        except ValueError:
            parsed = None
            capture["text"] = r.text
    return capture, parsed


def play(scenario: Scenario, target: Target) -> Run:
    """Run every step of ``scenario`` on ``target`` in its namespace; a failing step is captured, not raised."""
    variables = {"NS": scenario.namespace}
    target.ensure_namespace(scenario.namespace)
    captures = []
    for step in scenario.steps:
        if isinstance(step, KubectlStep):
            capture, parsed = _kubectl(target, step, variables)
        else:
            capture, parsed = _http(target, step, variables)
        for name, where in step.capture.items():
            got = dig(parsed, where)
            if got is None:  # shown in the capture, so the comparison says which server had nothing there
                capture.setdefault("missing", []).append(f"{name} at {where}")
                got = f"missing-{name}"
            variables[name] = str(got)
        captures.append(capture)
    return Run(target, captures, variables)
