"""The import graph in docs/architecture.md is the one the code has today."""

from __future__ import annotations

from ops import import_graph


def test_the_documented_import_graph_is_current() -> None:
    documented = import_graph.current_block(import_graph.DOC.read_text())
    assert documented is not None, "docs/architecture.md lost its import-graph markers"
    assert documented == import_graph.block(), "stale picture: run `.venv/bin/python -m ops.import_graph --write`"

