"""Kubernetes semantics: the one place for each Kubernetes rule draplane follows.

Every component (apiserver, scheduler, controllers, driver, node agent, chaos)
imports these rules from here instead of keeping its own copy, so two copies
cannot drift apart. Everything here is pure: plain values and wire dicts in,
values or exceptions out, no I/O, no awaits. Each module says which upstream
package it mirrors:

- `quantity`: ``resource.Quantity`` (k8s.io/apimachinery/pkg/api/resource);
- `names`: name and label formats (k8s.io/apimachinery/pkg/util/validation);
- `strconv`: Go's ``strconv.ParseInt`` as Kubernetes uses it for numbers in text;
- `labels`: label requirements and how they match (k8s.io/apimachinery/pkg/labels);
- `schema`: group/version strings (k8s.io/apimachinery/pkg/runtime/schema);
- `node_selectors`: NodeSelector and node affinity
  (k8s.io/component-helpers/scheduling/corev1/nodeaffinity);
- `resourceclaim`: the claim behind a pod claim and who may use it
  (k8s.io/dynamic-resource-allocation/resourceclaim, and the checks of the
  scheduler's dynamicresources plugin);
- `resource_limits`: the size limits the resource.k8s.io types declare (k8s.io/api/resource);
- `cel`: the DRA CEL environment and its cost estimate (k8s.io/dynamic-resource-allocation/cel, cel-go's checker cost);
- `structured`: the structured allocator (k8s.io/dynamic-resource-allocation/structured);
- `feature_gates`, `feature_gates_table`: the DRA feature gates and kube-scheduler's
  SchedulerPopFromBackoffQ, per release (k8s.io/component-base/featuregate, pkg/features/kube_features.go).
"""
