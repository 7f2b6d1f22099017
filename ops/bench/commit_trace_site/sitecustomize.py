"""Loaded at start-up by the benchmark's child processes (this directory is on their PYTHONPATH): installs
`ops.bench.commit_trace` when ``DRAPLANE_BENCH_COMMIT_TRACE`` names a directory (`install_from_env`)."""

from ops.bench.commit_trace import install_from_env

install_from_env()
