"""Bus URLs: which log to open, and how.

    kafka://host:port[,host:port][?prefix=t1-&security_protocol=SASL_SSL&...]
    sqlite:///absolute/path/bus.db[?prefix=t1-]
    sqlite:relative/path/bus.db

Parsing lives apart from the adapters so that `services.bus.open_bus` rejects a
bad URL with a clear message before importing any driver, and so that the CLI,
the tests and the benchmarks share one grammar.

The query string carries three kinds of parameters:

- ``prefix``: prepended to every topic name, group id and transactional id, so
  that several users (tests, say) share one broker or file without meeting;
- Kafka security settings, passed through to aiokafka (the SASL password only
  comes from ``DRAPLANE_KAFKA_SASL_PASSWORD``, never from a URL that ends up in
  logs; the user name may also come from ``DRAPLANE_KAFKA_SASL_USERNAME``);
- tuning options (timeouts, poll intervals), which keyword arguments of
  ``open_bus`` may also set.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

Option = int | str

SASL_USERNAME_ENV = "DRAPLANE_KAFKA_SASL_USERNAME"
SASL_PASSWORD_ENV = "DRAPLANE_KAFKA_SASL_PASSWORD"

# Kafka security settings accepted in the query string (aiokafka's names).
KAFKA_SECURITY_PARAMS: frozenset[str] = frozenset(
    {
        "security_protocol",
        "sasl_mechanism",
        "sasl_plain_username",
        "sasl_kerberos_service_name",
        "sasl_kerberos_domain_name",
        "ssl_cafile",
        "ssl_certfile",
        "ssl_keyfile",
        "ssl_check_hostname",
    }
)

# Tuning options and their types; shared ones first.
COMMON_OPTIONS: Mapping[str, type] = {
    "session_timeout_ms": int,
    "heartbeat_interval_ms": int,
    "transaction_timeout_ms": int,
}
KAFKA_OPTIONS: Mapping[str, type] = {
    **COMMON_OPTIONS,
    "client_id": str,
    "fetch_max_wait_ms": int,
    "linger_ms": int,
    "max_batch_size": int,
    "request_timeout_ms": int,
    "retry_backoff_ms": int,
    "replication_factor": int,
}
SQLITE_OPTIONS: Mapping[str, type] = {
    **COMMON_OPTIONS,
    "poll_interval_ms": int,
    "maintenance_interval_ms": int,
    "checkpoint_interval_ms": int,
    "checkpoint_frames": int,
    "busy_timeout_ms": int,
    "writes_on_loop": int,
}

_NAME = re.compile(r"^[A-Za-z0-9._-]*$")
_HOST_PORT = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$")


@dataclass(frozen=True, slots=True)
class KafkaTarget:
    """A Kafka cluster: bootstrap servers, security settings and tuning options."""

    bootstrap_servers: tuple[str, ...]
    prefix: str = ""
    security: Mapping[str, str] = field(default_factory=dict, repr=False)  # may hold the SASL password
    options: Mapping[str, Option] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SqliteTarget:
    """An embedded log in one SQLite file."""

    path: Path
    prefix: str = ""
    options: Mapping[str, Option] = field(default_factory=dict)


Target = KafkaTarget | SqliteTarget


def parse_bus_url(url: str, overrides: Mapping[str, object] | None = None) -> Target:
    """Parse a bus URL; ``overrides`` (keyword options) win over query parameters.

    Raises ValueError, naming the problem, for anything it does not understand.
    """
    parts = urlsplit(url)
    url = _redacted(url)  # from here on only for messages, which end up in logs
    scheme = parts.scheme.lower()
    if scheme not in ("kafka", "sqlite"):
        raise ValueError(
            f"bus URL {url!r}: unknown scheme {parts.scheme!r}; "
            "use kafka://host:port[,host:port] or sqlite:///path/to/bus.db"
        )
    if parts.fragment:
        raise ValueError(f"bus URL {url!r}: fragments (#...) are not allowed")
    params = _query(url, parts.query)
    params.update({k: v for k, v in (overrides or {}).items()})
    prefix = str(params.pop("prefix", "") or "")
    if not _NAME.match(prefix):
        raise ValueError(
            f"bus URL {url!r}: prefix {prefix!r} may only hold letters, digits, '.', '_' and '-'"
        )
    if scheme == "kafka":
        return _kafka(url, parts.netloc, parts.path, prefix, params)
    return _sqlite(url, parts.netloc, parts.path, prefix, params)


def _redacted(url: str) -> str:
    """``url`` without secrets: no user info, no ``sasl_plain_password`` value."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2] if "@" in parts.netloc else parts.netloc
    query = "&".join(
        f"{k}=***" if k == "sasl_plain_password" else f"{k}={v}" if sep else k
        for k, sep, v in (item.partition("=") for item in parts.query.split("&") if item)
    )
    return parts._replace(netloc=("***@" + netloc) if "@" in parts.netloc else netloc, query=query).geturl()


def _query(url: str, query: str) -> dict[str, object]:
    params: dict[str, object] = {}
    for key, value in parse_qsl(query, keep_blank_values=True, strict_parsing=False):
        if key in params:
            raise ValueError(f"bus URL {url!r}: parameter {key!r} given twice")
        params[key] = value
    return params


def _kafka(url: str, netloc: str, path: str, prefix: str, params: dict[str, object]) -> KafkaTarget:
    if path not in ("", "/"):
        raise ValueError(f"bus URL {url!r}: a kafka URL has no path (got {path!r})")
    if "@" in netloc:
        raise ValueError(
            f"bus URL {url!r}: credentials do not belong in the URL; set "
            f"{SASL_USERNAME_ENV} and {SASL_PASSWORD_ENV}"
        )
    servers = tuple(s.strip() for s in netloc.split(",") if s.strip())
    if not servers:
        raise ValueError(f"bus URL {url!r}: no bootstrap server; use kafka://host:port")
    for server in servers:
        match = _HOST_PORT.match(server)
        if match is None or not 0 < int(match.group(2)) < 65536:
            raise ValueError(f"bus URL {url!r}: {server!r} is not host:port")
    if "sasl_plain_password" in params:
        raise ValueError(
            f"bus URL {url!r}: pass the SASL password in {SASL_PASSWORD_ENV}, not in the URL"
        )
    security = {k: str(params.pop(k)) for k in list(params) if k in KAFKA_SECURITY_PARAMS}
    username = os.environ.get(SASL_USERNAME_ENV)
    if username and "sasl_plain_username" not in security:
        security["sasl_plain_username"] = username
    password = os.environ.get(SASL_PASSWORD_ENV)
    if password:
        security["sasl_plain_password"] = password
    options = _options(url, params, KAFKA_OPTIONS, extra=KAFKA_SECURITY_PARAMS)
    return KafkaTarget(servers, prefix, security, options)


def _sqlite(url: str, netloc: str, path: str, prefix: str, params: dict[str, object]) -> SqliteTarget:
    if netloc:
        raise ValueError(
            f"bus URL {url!r}: a sqlite URL has no host; use sqlite:///absolute/path.db "
            "or sqlite:relative/path.db"
        )
    if not path or path.endswith("/"):
        raise ValueError(f"bus URL {url!r}: no database file; use sqlite:///path/to/bus.db")
    if ":memory:" in path:
        raise ValueError(
            f"bus URL {url!r}: an in-memory database cannot be shared; use a file"
        )
    options = _options(url, params, SQLITE_OPTIONS)
    return SqliteTarget(Path(path), prefix, options)


def _options(
    url: str,
    params: dict[str, object],
    known: Mapping[str, type],
    *,
    extra: frozenset[str] = frozenset(),
) -> dict[str, Option]:
    options: dict[str, Option] = {}
    for key, raw in params.items():
        kind = known.get(key)
        if kind is None:
            allowed = ", ".join(sorted({"prefix", *known, *extra}))
            raise ValueError(f"bus URL {url!r}: unknown option {key!r}; known: {allowed}")
        if kind is int:
            if isinstance(raw, bool) or not isinstance(raw, int | str):
                raise ValueError(f"bus URL {url!r}: option {key} must be an integer")
            try:
                value = int(raw)
            except ValueError:
                raise ValueError(
                    f"bus URL {url!r}: option {key}={raw!r} is not an integer"
                ) from None
            if value < 0:
                raise ValueError(f"bus URL {url!r}: option {key} must not be negative")
            options[key] = value
        else:
            options[key] = str(raw)
    return options


def with_query(url: str, **params: object) -> str:
    """``url`` with these query parameters set (for tests and tools); a parameter it has already is replaced.

    Appending instead would give the URL a parameter twice, which ``parse_bus_url`` rejects.
    """
    if not params:
        return url
    base, _, query = url.partition("?")  # not urlsplit().geturl(), which turns sqlite:///p into sqlite:/p
    kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in params]
    return base + "?" + urlencode([*kept, *((k, str(v)) for k, v in params.items())])
