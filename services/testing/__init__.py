"""Running draplane inside tests: an in-process log harness and the user-facing pytest fixture."""
