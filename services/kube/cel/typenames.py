"""CEL type names as cel-go prints them.

Kubernetes' messages are cel-go's (``must evaluate to bool or the unknown
type, not map(string, int)``); the C++ checker spells types differently
(``MAP<STRING, INT>``). This module translates the latter into the former.
"""

from __future__ import annotations

_SIMPLE = {
    "BOOL": "bool",
    "INT": "int",
    "UINT": "uint",
    "DOUBLE": "double",
    "STRING": "string",
    "BYTES": "bytes",
    "NULL": "null_type",
    "NULL_TYPE": "null_type",
    "DYN": "dyn",
    "ANY": "google.protobuf.Any",
    "DURATION": "google.protobuf.Duration",
    "TIMESTAMP": "google.protobuf.Timestamp",
    "ERROR": "*error*",
}
_GENERIC = {"LIST": "list", "MAP": "map", "TYPE": "type", "optional_type": "optional_type"}


def split_type_list(text: str) -> list[str]:
    """Split ``a, map(b, c), list<d>`` at top-level commas."""
    args: list[str] = []
    depth = 0
    start = 0
    for i, c in enumerate(text):
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        elif c == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
    args.append(text[start:].strip())
    return [a for a in args if a]


def cel_go_name(cpp_name: str) -> str:
    """``MAP<STRING, LIST<INT>>`` → ``map(string, list(int))``."""
    name = cpp_name.strip()
    if "<" in name and name.endswith(">"):
        head, _, rest = name.partition("<")
        args = split_type_list(rest[:-1])
        generic = _GENERIC.get(head, head)
        return f"{generic}({', '.join(cel_go_name(a) for a in args)})"
    return _SIMPLE.get(name, name)
