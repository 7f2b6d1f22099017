"""draplane: Kubernetes Dynamic Resource Allocation as an event-sourced control plane."""
