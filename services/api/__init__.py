"""API machinery: types, validation, defaulting, gates, conversion, OpenAPI. Pure: no I/O."""
