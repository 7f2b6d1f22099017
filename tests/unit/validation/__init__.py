"""Unit tests of services.api.validation (Kubernetes 1.31 validation rules)."""
