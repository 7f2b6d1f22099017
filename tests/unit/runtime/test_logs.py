"""Log lines carry the component and the object context passed in ``extra``: JSON, or text for a terminal."""

from __future__ import annotations

import io
import logging

import orjson
import pytest

from services.runtime.logs import JsonFormatter, TextFormatter, wants_json


def test_json_log_line_has_component_and_context() -> None:
    record = logging.LogRecord("draplane.committer", logging.INFO, __file__, 1, "committed %d", (3,), None)
    record.key = "core/pods/default/web"
    record.resourceVersion = "42"
    record.request_id = "r-1"
    doc = orjson.loads(JsonFormatter("apiserver").format(record))
    assert doc["component"] == "apiserver"
    assert doc["msg"] == "committed 3"
    assert doc["level"] == "info"
    assert (doc["key"], doc["resourceVersion"], doc["request_id"]) == ("core/pods/default/web", "42", "r-1")
    assert doc["ts"].endswith("Z")


def test_text_log_line_is_timestamp_level_component_message_and_context() -> None:
    record = logging.LogRecord("services.scheduler.service", logging.WARNING, __file__, 1, "bound %s", ("p",), None)
    record.key = "core/pods/default/web"
    record.error = "two words"
    line = TextFormatter("draplane").format(record)
    ts, rest = line.split(" ", 1)
    assert ts.endswith("Z") and "T" in ts
    assert rest == 'WARNING scheduler   bound p key=core/pods/default/web error="two words"'


def test_a_logger_outside_services_keeps_its_own_name_and_the_root_the_process_name() -> None:
    kafka = logging.LogRecord("aiokafka.conn", logging.ERROR, __file__, 1, "down", (), None)
    root = logging.LogRecord("root", logging.INFO, __file__, 1, "hi", (), None)
    assert TextFormatter("apiserver").format(kafka).split(" ", 1)[1] == "ERROR aiokafka    down"
    assert TextFormatter("apiserver").format(root).split(" ", 1)[1] == "INFO  apiserver   hi"


class _Stream(io.StringIO):
    def __init__(self, *, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("log_format", "tty", "json"),
    [("auto", True, False), ("auto", False, True), ("text", False, False), ("json", True, True)],
)
def test_log_format_auto_is_text_on_a_terminal_and_json_otherwise(log_format: str, tty: bool, json: bool) -> None:
    assert wants_json(log_format, _Stream(tty=tty)) is json
