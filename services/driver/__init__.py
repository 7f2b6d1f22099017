"""The DRA driver: kubernetes-sigs/dra-example-driver rebuilt on the log.

A driver runs once per node. It publishes the node's devices as
ResourceSlices (`publisher`), prepares and unprepares claims for the node
agent over a unix socket by writing CDI specs (`prepare`, `plugin_socket`),
and, with ``--control-plane``, is the classic DRA control-plane controller for
claims whose ``spec.controller`` names it (`controller`). `service` wires it
all; `command` is its ``draplane driver`` command line.

Pure modules (no I/O, no awaits): `inventory`, `slices`, `config`, `cdi`,
`prepared`, `plugin_api`, `classic`, and the parser half of `nvidia`.
"""
