"""JSON values with the offsets of every value in them (`json.loads` gives none).

Notebook writes splice new cell sources into the file's own text at these offsets, so
nothing else in the file changes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Node:
    kind: str                     # "object", "array", "string", "scalar"
    start: int                    # offset of the value's first character
    end: int                      # offset after its last character
    items: list = field(default_factory=list)   # object: [(key, Node)], array: [Node]
    value: Any = None             # decoded value for strings and scalars


_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


def parse(text: str, i: int = 0) -> Node:
    """A JSON value with the offsets of every value in it (json.loads gives none)."""
    i = _WS.match(text, i).end()
    ch = text[i:i + 1]
    if ch == '"':
        value, end = json.decoder.scanstring(text, i + 1)
        return Node("string", i, end, value=value)
    if ch in ("{", "["):
        close = "}" if ch == "{" else "]"
        node = Node("object" if ch == "{" else "array", i, i)
        j = _WS.match(text, i + 1).end()
        if text[j:j + 1] == close:
            node.end = j + 1
            return node
        while True:
            if ch == "{":
                key = parse(text, j)
                if key.kind != "string":
                    raise ValueError(f"expected a key at offset {key.start}")
                j = _WS.match(text, key.end).end()
                if text[j:j + 1] != ":":
                    raise ValueError(f"expected ':' at offset {j}")
                value = parse(text, j + 1)
                node.items.append((key.value, value))
            else:
                value = parse(text, j)
                node.items.append(value)
            j = _WS.match(text, value.end).end()
            if text[j:j + 1] == ",":
                j += 1
                continue
            if text[j:j + 1] == close:
                node.end = j + 1
                return node
            raise ValueError(f"expected ',' or {close!r} at offset {j}")
    m = _SCALAR.match(text, i)
    if not m:
        raise ValueError(f"unexpected character at offset {i}")
    return Node("scalar", i, m.end(), value=json.loads(m.group()))


def get(node: Node, key: str) -> Node | None:
    for k, v in node.items:
        if k == key:
            return v
    return None
