"""Running child processes for the tools in ``ops`` (see `ops.processes.supervised`)."""
