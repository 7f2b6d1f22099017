"""The Kubernetes API, pure (no I/O): three layers, each importing only the ones below it.

- `admission` — authorization, defaulting, feature-gated fields and validation;
- `machinery` — decoding, encoding, conversion, patches, selectors and Status errors;
- `types` — the models of every kind and version, and the table of resources.

Rules that are not about the API alone (quantities, node selectors, claim
helpers, feature gates, CEL) live in `services.kube`.
"""
