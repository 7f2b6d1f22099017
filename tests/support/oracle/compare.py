"""Two targets' normalised outputs diffed path by path, against the list of differences we expect.

Why this module exists: a difference between kube-apiserver and draplane is
either a bug or a documented choice. The documented ones live in one place,
the fenced ``yaml oracle-known-differences`` block of docs/compatibility.md
(scenario id, JSON path, reason), read here. Any other difference fails its
scenario with a readable diff, and a listed difference that no longer occurs
fails too, so the list stays true.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

COMPATIBILITY_DOC = Path(__file__).resolve().parents[3] / "docs" / "compatibility.md"
_BLOCK = re.compile(r"^```yaml oracle-known-differences\n(.*?)^```", re.S | re.M)
_MISSING = "<absent>"


class KnownDifferencesError(ValueError):
    """The known-differences block is missing or malformed."""


_UNSET: Any = object()


@dataclass(frozen=True)
class Known:
    """One expected difference: in scenario ``scenario`` (a glob), at paths matching ``path`` (a glob).

    ``oracle`` and ``draplane``, when given, are the normalised values the two
    sides must have (``<absent>`` for none): they let one entry cover a pattern
    that recurs across scenarios (``path: "*.spec"``, ``oracle: {}``,
    ``draplane: <absent>``) without hiding any other difference at such paths.
    An entry whose scenario is a glob is checked for staleness over the whole
    run (`stale_globs`), one naming a scenario in that scenario's test.
    """

    scenario: str
    path: str
    reason: str
    oracle: Any = _UNSET
    draplane: Any = _UNSET

    def matches(self, scenario: str, path: str) -> bool:
        return glob_match(scenario, self.scenario) and glob_match(path, self.path)

    def explains(self, scenario: str, diff: Difference) -> bool:
        return (
            self.matches(scenario, diff.path)
            and (self.oracle is _UNSET or self.oracle == diff.oracle)
            and (self.draplane is _UNSET or self.draplane == diff.draplane)
        )

    @property
    def is_glob(self) -> bool:
        return "*" in self.scenario


def glob_match(value: str, pattern: str) -> bool:
    """``*`` matches any run of characters (dots and brackets too); everything else, ``[`` included, is literal."""
    return re.fullmatch(".*".join(re.escape(part) for part in pattern.split("*")), value, re.S) is not None


@dataclass(frozen=True)
class Difference:
    path: str
    oracle: Any  # kube-apiserver's normalised value (``<absent>`` when it has none)
    draplane: Any


def parse_known(markdown: str) -> list[Known]:
    """The entries of the ``yaml oracle-known-differences`` block of a Markdown document."""
    m = _BLOCK.search(markdown)
    if m is None:
        raise KnownDifferencesError("no ```yaml oracle-known-differences block")
    entries = yaml.safe_load(m.group(1)) or []
    if not isinstance(entries, list):
        raise KnownDifferencesError("the oracle-known-differences block is a YAML list")
    out = []
    for i, e in enumerate(entries):
        if (
            not isinstance(e, dict)
            or not {"scenario", "path", "reason"} <= set(e) <= {"scenario", "path", "reason", "oracle", "draplane"}
            or not str(e["reason"]).strip()
        ):
            raise KnownDifferencesError(
                f"entry #{i} needs scenario, path and a non-empty reason (and optionally oracle, draplane): {e!r}"
            )
        out.append(
            Known(
                str(e["scenario"]),
                str(e["path"]),
                str(e["reason"]).strip(),
                oracle=e.get("oracle", _UNSET),
                draplane=e.get("draplane", _UNSET),
            )
        )
    return out


def load_known(doc: Path = COMPATIBILITY_DOC) -> list[Known]:
    return parse_known(doc.read_text())


def flatten(doc: Any, prefix: str = "") -> dict[str, Any]:
    """Leaf paths (``steps[2].body.metadata.name``) to scalars; an empty list or map is a leaf of its own."""
    out: dict[str, Any] = {}
    if isinstance(doc, dict) and doc:
        for k, v in doc.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(doc, list) and doc:
        for i, v in enumerate(doc):
            out.update(flatten(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = doc
    return out


def differences(oracle: Any, draplane: Any) -> list[Difference]:
    """Every leaf path where the two differ, in the oracle's order, then draplane's extras."""
    left, right = flatten(oracle), flatten(draplane)
    paths = list(left) + [p for p in right if p not in left]
    return [
        Difference(p, left.get(p, _MISSING), right.get(p, _MISSING))
        for p in paths
        if left.get(p, _MISSING) != right.get(p, _MISSING)
    ]


@dataclass(frozen=True)
class Verdict:
    unexplained: list[Difference]
    explained: list[tuple[Difference, Known]]
    stale: list[Known]  # listed for this scenario, matching no difference any more

    @property
    def ok(self) -> bool:
        return not self.unexplained and not self.stale


def judge(scenario: str, diffs: list[Difference], known: list[Known]) -> Verdict:
    """Split ``diffs`` into explained and unexplained; find the entries naming this scenario that nothing matched."""
    mine = [k for k in known if glob_match(scenario, k.scenario)]
    used: set[int] = set()
    unexplained, explained = [], []
    for d in diffs:
        hit = next((i for i, k in enumerate(mine) if k.explains(scenario, d)), None)
        if hit is None:
            unexplained.append(d)
        else:
            used.add(hit)
            explained.append((d, mine[hit]))
    stale = [k for i, k in enumerate(mine) if i not in used and not k.is_glob]
    return Verdict(unexplained, explained, stale)


def stale_globs(known: list[Known], verdicts: list[Verdict]) -> list[Known]:
    """Entries with a scenario glob that explained nothing in any of ``verdicts`` (a whole run's)."""
    used = {id(k) for v in verdicts for _, k in v.explained}
    return [k for k in known if k.is_glob and id(k) not in used]


def _dump(doc: Any) -> list[str]:
    return yaml.safe_dump(doc, sort_keys=True, allow_unicode=True, width=200).splitlines()


def report(scenario: str, verdict: Verdict, oracle: Any, draplane: Any, *, oracle_name: str = "kube-apiserver") -> str:
    """What a failing scenario prints: the unexplained paths, stale entries and a unified diff of both outputs."""
    lines = [f"scenario {scenario}: {oracle_name} and draplane differ"]
    if verdict.unexplained:
        lines.append("unexplained differences (fix draplane, or list them in docs/compatibility.md with a reason):")
        for d in verdict.unexplained:
            lines.append(f"  {d.path}: {oracle_name}={d.oracle!r} draplane={d.draplane!r}")
    if verdict.stale:
        lines.append("listed in docs/compatibility.md but no longer different (remove the entry):")
        for k in verdict.stale:
            lines.append(f"  scenario={k.scenario} path={k.path} ({k.reason})")
    lines.append("normalised outputs:")
    lines.extend(difflib.unified_diff(_dump(oracle), _dump(draplane), oracle_name, "draplane", lineterm="", n=4))
    return "\n".join(lines)
