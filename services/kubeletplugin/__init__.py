"""The kubelet's DRA plugin API: what the node agent and a driver say to each other."""
