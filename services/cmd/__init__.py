"""The `draplane` subcommands, one module each: ``add_parser`` builds its arguments, ``run`` runs it."""
