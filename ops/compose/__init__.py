"""docker-compose.yml as local processes: the compose stack without a Docker engine.

``model`` reads the compose file (and the image's Dockerfile), ``order`` puts
the services in ``depends_on`` order, ``localize`` turns each service into a
local process (command, environment, ports, volumes, healthcheck), and
``supervisor`` runs them with compose's conditions and restart policies.
``python -m ops.compose`` (``ops/compose/run-local``) is the command line.
"""
