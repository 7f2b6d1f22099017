"""A scenario is data: steps of kubectl commands and HTTP requests, read from tests/oracle/scenarios/*.yaml.

Why this module exists: the oracle suite plays each scenario against two
servers, and a second author adds scenarios without touching Python. Loading
checks the shape strictly, so a typo in a scenario file is an error that names
the file and the scenario, not a silently skipped step.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

SCENARIOS_DIR = Path(__file__).resolve().parents[2] / "oracle" / "scenarios"

_ID = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# The namespace is "o-" + the id, a DNS label: at most 63 characters.
_MAX_ID = 61
_OUTPUTS = ("text", "json", "yaml")
_KUBECTL_KEYS = {"kubectl", "stdin", "output", "namespace", "capture", "ignore_stderr"}
_HTTP_KEYS = {"http", "headers", "body", "content_type", "compare_headers", "watch", "capture", "raw"}


class ScenarioError(ValueError):
    """A scenario file that does not have the shape this module reads."""


@dataclass(frozen=True)
class KubectlStep:
    args: tuple[str, ...]
    stdin: str | None = None
    output: str = "text"  # how stdout is compared: text lines, or parsed JSON/YAML
    namespace: bool = True  # append --namespace=<the scenario's namespace>
    capture: dict[str, str] = field(default_factory=dict)  # variable -> dotted path into parsed stdout
    ignore_stderr: bool = False


@dataclass(frozen=True)
class HttpStep:
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None  # JSON-encoded unless ``raw`` (then sent as the string it is)
    raw: bool = False
    content_type: str | None = None
    compare_headers: tuple[str, ...] = ("Content-Type",)
    watch: bool = False  # the body is a stream of JSON watch events, one per line
    capture: dict[str, str] = field(default_factory=dict)


Step = KubectlStep | HttpStep


@dataclass(frozen=True)
class Scenario:
    id: str
    about: str
    steps: tuple[Step, ...]
    source: Path

    @property
    def namespace(self) -> str:
        """The namespace the scenario runs in, the same name on both servers."""
        return f"o-{self.id}"


def _step(raw: Any, where: str) -> Step:
    if not isinstance(raw, dict):
        raise ScenarioError(f"{where}: a step is a mapping with 'kubectl' or 'http'")
    if "kubectl" in raw:
        unknown = set(raw) - _KUBECTL_KEYS
        if unknown:
            raise ScenarioError(f"{where}: unknown kubectl step keys {sorted(unknown)}")
        args = raw["kubectl"]
        argv = tuple(shlex.split(args)) if isinstance(args, str) else tuple(str(a) for a in args)
        output = raw.get("output", "text")
        if output not in _OUTPUTS:
            raise ScenarioError(f"{where}: output must be one of {_OUTPUTS}, not {output!r}")
        return KubectlStep(
            args=argv,
            stdin=raw.get("stdin"),
            output=output,
            namespace=bool(raw.get("namespace", True)),
            capture=dict(raw.get("capture") or {}),
            ignore_stderr=bool(raw.get("ignore_stderr", False)),
        )
    if "http" in raw:
        unknown = set(raw) - _HTTP_KEYS
        if unknown:
            raise ScenarioError(f"{where}: unknown http step keys {sorted(unknown)}")
        method, _, path = str(raw["http"]).partition(" ")
        if not path.startswith("/"):
            raise ScenarioError(f"{where}: http is 'METHOD /path', not {raw['http']!r}")
        return HttpStep(
            method=method.upper(),
            path=path.strip(),
            headers={str(k): str(v) for k, v in (raw.get("headers") or {}).items()},
            body=raw.get("body"),
            raw=bool(raw.get("raw", False)),
            content_type=raw.get("content_type"),
            compare_headers=tuple(raw.get("compare_headers", ("Content-Type",))),
            watch=bool(raw.get("watch", False)),
            capture=dict(raw.get("capture") or {}),
        )
    raise ScenarioError(f"{where}: a step needs 'kubectl' or 'http'")


def parse(text: str, source: Path) -> list[Scenario]:
    """The scenarios of one file (``scenarios:`` a list of ``{id, about, steps}``)."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{source}: not YAML: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("scenarios"), list):
        raise ScenarioError(f"{source}: the file holds 'scenarios:', a list")
    out = []
    for i, raw in enumerate(doc["scenarios"]):
        if not isinstance(raw, dict) or set(raw) - {"id", "about", "steps"}:
            raise ScenarioError(f"{source}: scenario #{i} has keys id, about and steps only")
        sid = str(raw.get("id", ""))
        if not _ID.match(sid) or len(sid) > _MAX_ID:
            raise ScenarioError(f"{source}: scenario #{i}: id {sid!r} is not a DNS label of at most {_MAX_ID}")
        steps = raw.get("steps")
        if not isinstance(steps, list) or not steps:
            raise ScenarioError(f"{source}: {sid}: 'steps' is a non-empty list")
        out.append(
            Scenario(
                id=sid,
                about=str(raw.get("about", "")).strip(),
                steps=tuple(_step(s, f"{source.name}: {sid}: step {n}") for n, s in enumerate(steps)),
                source=source,
            )
        )
    return out


def load_all(directory: Path = SCENARIOS_DIR) -> list[Scenario]:
    """Every scenario under ``directory``, file by file; ids are unique across files."""
    scenarios: list[Scenario] = []
    for path in sorted(directory.glob("*.yaml")):
        scenarios.extend(parse(path.read_text(), path))
    seen: dict[str, Path] = {}
    for s in scenarios:
        if s.id in seen:
            raise ScenarioError(f"scenario id {s.id!r} is in {seen[s.id].name} and {s.source.name}")
        seen[s.id] = s.source
    return scenarios


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def substitute(value: Any, variables: dict[str, str]) -> Any:
    """``${NAME}`` replaced by the variable's value in every string of ``value`` (a missing one is an error)."""
    if isinstance(value, str):

        def one(m: re.Match[str]) -> str:
            if m.group(1) not in variables:
                raise ScenarioError(f"${{{m.group(1)}}} is not set (set: {sorted(variables)})")
            return variables[m.group(1)]

        return _VAR.sub(one, value)
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    if isinstance(value, tuple):
        return tuple(substitute(v, variables) for v in value)
    if isinstance(value, dict):
        return {substitute(k, variables): substitute(v, variables) for k, v in value.items()}
    return value


def dig(doc: Any, path: str) -> Any:
    """The value at a dotted path (``metadata.resourceVersion``, ``items.0.metadata.name``), or None."""
    for part in path.split("."):
        if isinstance(doc, dict):
            doc = doc.get(part)
        elif isinstance(doc, list) and part.lstrip("-").isdigit() and -len(doc) <= int(part) < len(doc):
            doc = doc[int(part)]
        else:
            return None
    return doc
