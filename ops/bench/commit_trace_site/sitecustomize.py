"""Loaded at start-up by the benchmark's child processes (this directory is on their PYTHONPATH):
installs `ops.bench.commit_trace` when ``DRAPLANE_BENCH_COMMIT_TRACE`` is set, and does nothing otherwise."""

import os

if os.environ.get("DRAPLANE_BENCH_COMMIT_TRACE"):
    from ops.bench.commit_trace import install_from_env

    install_from_env()
