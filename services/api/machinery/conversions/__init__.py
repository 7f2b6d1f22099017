"""Conversion functions of resource.k8s.io between every version and the storage (hub) form.

Why this package exists: one small module per version holds that version's
two directions for every kind it has (`resource_v1`, `resource_v1beta2`,
`resource_v1beta1`, `resource_v1alpha3`); `table` lists them in the shape
`services.api.machinery.conversion.CONVERSIONS` uses; `projection` drops what
a version's models have no field for; `unrepresentable` keeps, on an update
through a version, the stored fields that version cannot express. The storage
form and its reasons: docs/decisions/api-versions.md. All pure.
"""
