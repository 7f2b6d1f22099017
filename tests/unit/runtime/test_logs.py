"""JSON log lines carry the component and the object context passed in ``extra``."""

from __future__ import annotations

import logging

import orjson

from services.runtime.logs import JsonFormatter


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
