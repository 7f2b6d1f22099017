"""Log lines for people and for machines: text on a terminal, JSON lines otherwise.

JSON (``--log-format json``, and the default when stderr is not a terminal):
one object per line with the component, and the object key, resourceVersion
and request id when a log call passes them in ``extra`` — what log shippers
and ``jq`` read. Text (``--log-format text``, and the default on a terminal):
``timestamp LEVEL component message key=value …``, one line per record, so a
person running ``./ops/up`` reads the stack's log without a JSON viewer.
"""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

import orjson

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}

AUTO = "auto"
TEXT = "text"
JSON = "json"
FORMATS = (AUTO, TEXT, JSON)


def _timestamp(record: logging.LogRecord) -> str:
    return datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in record.__dict__.items() if k not in _STANDARD and not k.startswith("_")}


class JsonFormatter(logging.Formatter):
    def __init__(self, component: str) -> None:
        super().__init__()
        self.component = component

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "ts": _timestamp(record),
            "level": record.levelname.lower(),
            "component": self.component,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        doc.update(_extras(record))
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(doc, default=str).decode()


def _logfmt_value(value: Any) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
    if text == "" or any(c in text for c in ' ="\n'):
        return orjson.dumps(text).decode()
    return text


class TextFormatter(logging.Formatter):
    """``2026-01-02T03:04:05.678Z INFO  scheduler   message key=value`` (level and component padded).

    The component is the process's (``apiserver``, ``scheduler`` …); in the
    one-process ``draplane up`` it is the package the logger belongs to
    (``services.scheduler.service`` → ``scheduler``), so the components stay
    apart in one stream.
    """

    def __init__(self, component: str) -> None:
        super().__init__()
        self.component = component

    def component_of(self, record: logging.LogRecord) -> str:
        parts = record.name.split(".")
        if parts[0] == "services" and len(parts) > 1:
            return parts[1]
        return self.component if parts[0] in ("", "root", "services") else parts[0]

    def format(self, record: logging.LogRecord) -> str:
        line = f"{_timestamp(record)} {record.levelname:<5} {self.component_of(record):<11} {record.getMessage()}"
        extras = " ".join(f"{key}={_logfmt_value(value)}" for key, value in _extras(record).items())
        if extras:
            line += f" {extras}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def wants_json(log_format: str, stream: TextIO | None = None) -> bool:
    """Whether ``--log-format`` (auto, text, json) means JSON lines on ``stream`` (stderr)."""
    if log_format == JSON:
        return True
    if log_format == TEXT:
        return False
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return not (callable(isatty) and isatty())


def setup_logging(component: str, *, level: str = "INFO", json: bool = True) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(component) if json else TextFormatter(component))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("aiokafka", "aiohttp.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
