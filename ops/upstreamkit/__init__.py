"""Upstream Kubernetes binaries for tests and benchmarks: built from the Go module proxy, cached, run on loopback.

Why this package exists: the upstream e2e test runs unmodified kube-scheduler
and kube-controller-manager against draplane, the oracle suite compares
draplane with a real kube-apiserver, and the scheduler benchmark times
kube-scheduler. They share one cache (``.cache/upstream/``, layout in
`versions`) and one way to build and start the binaries. ``ops/upstream`` is
the command line (`__main__`).

The API others import:

- ``build.binary_path(name, version=None) -> (Path | None, reason | None)``:
  a cached binary (``kube-apiserver``, ``kube-scheduler``,
  ``kube-controller-manager`` at ``1.31.14``/``1.37.2``, ``etcd`` at
  `versions.ETCD_VERSION`), or why it is missing;
- ``build.build(targets=DEFAULT_TARGETS) -> failures``: builds the missing
  ones, idempotent, under a file lock (a concurrent caller waits);
  ``build.ALL_TARGETS`` adds 1.37.2;
- ``run.kube_apiserver(workdir, version=...)``: async context manager, etcd +
  kube-apiserver with DRA on, AlwaysAllow, a bearer token; yields ``url``,
  ``kubeconfig``, ``token``, ``ca_file``;
- ``run.kube_components(kubeconfig, workdir, version=..., content_type=None,
  which=...)``: async context manager, kube-scheduler and
  kube-controller-manager with default flags and leader election on;
- ``waiting.wait_for_build(targets)``: what a test fixture calls — waits for
  ``./ops/test``'s background build, returns the paths or a reason to
  skip/fail (see `waiting`).

`versions` and `build` use the standard library only; `run` needs the venv.
"""
