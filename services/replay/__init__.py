"""Reading the log back for people: `draplane replay` and point-in-time state."""
