"""The controller-manager: the resourceclaim controller and the ownerReference garbage collector.

Pure decisions (no I/O, table-tested):

- (claim names and who may use a claim are Kubernetes' rules, shared with the
  scheduler, the driver and the node agent: `services.kube.resourceclaim`);
- `generated_claims` — the claim generated for a pod claim, finding it again,
  the pod-status patch that records it;
- `pod_claims` — what a pod needs (``podNeedsClaims``, ``podNeedsWork``);
- `reserved_for` — stale reservations, deallocation, deleting unused claims;
- `ownership` — owner classification and the garbage collector's plan;
- `object_edits`, `gates`, `mutation_cache`.

I/O loops: `resourceclaim.ResourceClaimController`,
`garbage_collector.GarbageCollector`, and `manager.ControllerManager`, which
runs both over one informer.
"""
