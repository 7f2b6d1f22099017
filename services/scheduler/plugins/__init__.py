"""The in-tree scheduler plugins draplane implements, each in kube-scheduler's semantics."""
