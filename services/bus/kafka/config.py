"""Client settings for the Kafka adapter: tuning, security, and their aiokafka keywords.

Defaults favour latency, because a write's round trip (request → committer →
reply → informer) crosses the log several times: consumers wait at most
``fetch_max_wait_ms`` (50 ms, not aiokafka's 500) on an idle partition,
producers do not linger, and retries back off by 20 ms. Group timeouts are
configurable so tests can hand leadership over in about a second.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from aiokafka.helpers import create_ssl_context

from services.bus.urls import KafkaTarget, Option

SSL_PROTOCOLS = frozenset({"SSL", "SASL_SSL"})
SASL_KEYS = (
    "sasl_mechanism",
    "sasl_plain_username",
    "sasl_plain_password",
    "sasl_kerberos_service_name",
    "sasl_kerberos_domain_name",
)


@dataclass(frozen=True, slots=True)
class KafkaSettings:
    client_id: str = "draplane"
    session_timeout_ms: int = 10_000
    heartbeat_interval_ms: int = 1_000
    transaction_timeout_ms: int = 60_000
    fetch_max_wait_ms: int = 50
    linger_ms: int = 0
    max_batch_size: int = 512 * 1024
    request_timeout_ms: int = 30_000
    retry_backoff_ms: int = 20
    replication_factor: int = 0  # 0: min(3, brokers in the cluster)

    @classmethod
    def from_options(cls, options: Mapping[str, Option]) -> KafkaSettings:
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {k: v for k, v in options.items() if k in known}
        if "session_timeout_ms" in values and "heartbeat_interval_ms" not in values:
            values["heartbeat_interval_ms"] = max(10, min(1_000, int(values["session_timeout_ms"]) // 3))
        return cls(**values)


def client_options(target: KafkaTarget, settings: KafkaSettings) -> dict[str, Any]:
    """Keyword arguments every aiokafka client of this bus shares."""
    security = dict(target.security)
    protocol = security.pop("security_protocol", "PLAINTEXT").upper()
    options: dict[str, Any] = {
        "bootstrap_servers": list(target.bootstrap_servers),
        "client_id": settings.client_id,
        "request_timeout_ms": settings.request_timeout_ms,
        "retry_backoff_ms": settings.retry_backoff_ms,
        "security_protocol": protocol,
    }
    ssl = {k: security.pop(k) for k in list(security) if k.startswith("ssl_")}
    if protocol in SSL_PROTOCOLS:
        context = create_ssl_context(
            cafile=ssl.get("ssl_cafile"),
            certfile=ssl.get("ssl_certfile"),
            keyfile=ssl.get("ssl_keyfile"),
        )
        if ssl.get("ssl_check_hostname", "true").lower() in ("0", "false", "no"):
            context.check_hostname = False
        options["ssl_context"] = context
    elif ssl:
        raise ValueError(
            f"bus URL: {', '.join(sorted(ssl))} need security_protocol=SSL or SASL_SSL"
        )
    for key in SASL_KEYS:
        if key in security:
            options[key] = security.pop(key)
    return options
