"""Unit tests of services.api.admission.validation (Kubernetes 1.31 validation rules)."""
