"""`backward()` raised "modified by an inplace operation": name the forward line and the in-place line.

The failing step is repeated under torch.autograd.set_detect_anomaly(True): anomaly mode's warning carries the
traceback of the forward call whose saved tensor went stale. The probe's op log of the same step (storages per
op) then finds the first in-place op, after that forward line, on a storage that line read or produced.
"""

from __future__ import annotations

import re

from gradfix.probe.findings import KINDS, Finding
from gradfix.probe.frames import is_user_file

_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_NODE = re.compile(r"Error detected in (\w+)")


def anomaly_forward(warnings: list[str]) -> tuple[tuple[str, int] | None, str | None]:
    """(innermost user frame of the forward call, backward node name) from anomaly mode's warning."""
    for text in warnings:
        if "Traceback of forward call" not in text:
            continue
        frames = [(f, int(n)) for f, n in _FRAME.findall(text) if is_user_file(f)]
        node = _NODE.search(text)
        if frames:
            return frames[-1], node.group(1) if node else None
    return None, None


def inplace_site(ops: list[dict], forward: tuple[str, int]) -> tuple[str, tuple[str, int]] | None:
    """(op, location) of the first in-place op after the forward line that wrote a storage that line used."""
    first = next((i for i, op in enumerate(ops) if op["loc"] == forward), None)
    if first is None:
        return None
    storages: set[int] = set()
    for i, op in enumerate(ops):
        if i < first:
            continue
        if op["loc"] == forward:
            storages |= op["storages"]
        if op["inplace"] and op["target"] in storages and op["loc"] is not None:
            return op["op"], op["loc"]
    return None


_OUT_OF_PLACE = {"__itruediv__": "/", "div_": "/", "__imul__": "*", "mul_": "*", "__iadd__": "+", "add_": "+",
                 "__isub__": "-", "sub_": "-"}


def _op_word(op: str) -> str:
    sym = {"__itruediv__": "/=", "__imul__": "*=", "__iadd__": "+=", "__isub__": "-=", "div_": "/= (div_)",
           "mul_": "*= (mul_)", "add_": "+= (add_)", "sub_": "-= (sub_)", "__setitem__": "item assignment"}
    return f"`{sym.get(op, op)}`"


def _fix_hint(op: str) -> str:
    sym = _OUT_OF_PLACE.get(op)
    return f"`x = x {sym} ...`" if sym else "an out-of-place op or a `.clone()` first"


def inplace_finding(error: dict, replay=None) -> Finding:
    """The finding for a failed backward; `replay` is the probe of the repeated step (None: not repeated)."""
    first_line = error["message"].splitlines()[0]
    warnings = list(error.get("warnings") or [])
    if replay is not None and replay.inplace_error is not None:
        warnings += replay.inplace_error.get("warnings") or []
    forward, node = anomaly_forward(warnings)
    site = None
    if forward is not None and replay is not None and replay.last_tracer is not None:
        site = inplace_site(replay.last_tracer.ops, forward)
    related = []
    bwd = error.get("backward_loc")
    if forward is None:
        path, line = bwd if bwd else (None, None)
        msg = (f"backward() fails: {first_line} (the forward line could not be found"
               + ("; run `gradfix probe` on the script to repeat the step with anomaly detection)" if replay is None
                  else ")"))
    else:
        op_txt = f"`{node}`'s forward" if node else "the forward op"
        if site is not None:
            op, (path, line) = site
            same = (path, line) == forward
            msg = (f"backward() fails: {op_txt} at line {forward[1]} saved a tensor for backward that the in-place "
                   f"{_op_word(op)} at line {line}{' (the same line)' if same else ''} then changed; write it "
                   f"out of place ({_fix_hint(op)}). PyTorch: {first_line}")
        else:
            path, line = forward
            msg = (f"backward() fails: {op_txt} at line {forward[1]} saved a tensor for backward that an in-place "
                   f"op changed later. PyTorch: {first_line}")
        related.append({"path": forward[0], "line": forward[1], "role": "forward"})
        if site is not None:
            related.append({"path": site[1][0], "line": site[1][1], "role": "inplace"})
    if bwd:
        related.append({"path": bwd[0], "line": bwd[1], "role": "backward"})
    return Finding("inplace-on-saved-tensor", msg, path, line, [], KINDS["inplace-on-saved-tensor"], related)
