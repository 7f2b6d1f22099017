"""API machinery: decoding, encoding, conversion, patches, selectors and Status errors."""
