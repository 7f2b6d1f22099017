"""``ops/chaos``: a workload with churn under process kills and broker restarts, checked from the log.

Why this package exists: the control plane promises that no committed object
is lost, that no device is allocated twice, and that a retried request is
committed once, whatever dies. The run (`run`) starts every component as its
own OS process, drives pods with ResourceClaims through them while it
SIGKILLs and restarts components and restarts the broker, and afterwards
reads `objects` from the beginning and checks the invariants
(`invariants`, pure functions over the records). See ``docs/chaos.md``.

- `records`: the `objects` log as a list of decoded records, read through the bus port;
- `invariants`: the checks, one function per invariant (pure);
- `workload`: the manifests of the workload (pure);
- `processes`, `broker`: component processes and the Kafka broker, started, killed and restarted;
- `writer`: creates and deletes with retries, through the REST API and through the log;
- `run`: the whole run and its command line.
"""
