"""Admission: authorization, defaulting, feature-gated fields and validation, run before every commit."""
