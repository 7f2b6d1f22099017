"""Print what scenarios capture on a fresh draplane, normalised: ``python -m tests.support.oracle.show [ID ...]``.

For scenario authors: see each step's output before the suite compares it,
without kube-apiserver. With no ids, every scenario runs.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import yaml

from tests.support.oracle import targets
from tests.support.oracle.runner import play
from tests.support.oracle.scenario import load_all


def main(ids: list[str]) -> int:
    scenarios = [s for s in load_all() if not ids or s.id in ids]
    with tempfile.TemporaryDirectory() as tmp, targets.draplane(Path(tmp)) as target:
        for s in scenarios:
            print(f"# {s.id}")
            print(yaml.safe_dump(play(s, target).normalised(), sort_keys=False, allow_unicode=True, width=200))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
