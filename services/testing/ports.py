"""Local ports for processes a test, benchmark or chaos run starts, and whether a Kafka broker answers."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kafka_answers(servers: str, timeout: float = 2.0) -> bool:
    """True when any of ``servers`` (``host:port[,host:port]``) accepts a TCP connection."""
    for server in servers.split(","):
        host, _, port = server.strip().rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
                return True
        except (OSError, ValueError):
            continue
    return False
