"""Topic declarations and the record envelopes of draplane's log."""
