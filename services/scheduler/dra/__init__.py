"""Helpers of the DynamicResources plugin: claim lookup, the claim assume cache, PodSchedulingContext."""
