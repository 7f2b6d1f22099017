"""Kubernetes semantics, one implementation each."""
