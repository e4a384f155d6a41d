"""The training iteration as the verifier's train-loop check reads it.

`skeleton()` renders an Iteration's events (and the epoch loop's) as JSON; `call_spec()`
and `module_constants()` describe the optimizer and scheduler constructors so the
verifier can rebuild them on a synthetic model; `statement_at()` / `grad_op_of()` serve
its statement mode. gradfix/verify/checks_loop.py re-reads both versions of a file
through these. Everything here is static; nothing imports torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gradfix.analysis.expressions import code_of, grad_op_info, literal_value
from gradfix.analysis.trainstep import literal_number
from gradfix.analysis.tree import walk as _walk

if TYPE_CHECKING:
    from gradfix.analysis.iteration import Event, Iteration

def module_constants(index) -> dict:
    """`NAME = <literal>` at module level (the last one wins), as JSON values."""
    out: dict = {}
    for stmt in index.module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                        isinstance(small.targets[0].target, cst.Name):
                    ok, v = literal_value(small.value)
                    name = small.targets[0].target.value
                    v = _jsonable(v) if ok else _NOT_JSON
                    if v is _NOT_JSON:
                        out.pop(name, None)
                    else:
                        out[name] = v
    return out


def call_spec(call: cst.Call | None, ctor: str | None, skip_first: bool = True, index=None) -> dict | None:
    """A constructor call as JSON the verifier can rebuild: literal arguments as values, the rest as null.
    With `index`, module-level literal constants the other arguments name go along in "env"."""
    if call is None or ctor is None:
        return None
    args, args_src, kwargs = [], [], {}
    positional = [a for a in call.args if a.keyword is None]
    for i, a in enumerate(positional):
        if skip_first and i == 0:
            continue
        ok, v = literal_value(a.value) if not a.star else (False, None)
        v = _jsonable(v) if ok else None
        args.append(None if v is _NOT_JSON else v)
        args_src.append((a.star or "") + code_of(a.value))
    for a in call.args:
        if a.keyword is None:
            continue
        key = a.keyword.value
        if skip_first and key in ("optimizer", "params"):
            continue
        ok, v = literal_value(a.value)
        if ok and _jsonable(v) is not _NOT_JSON:
            kwargs[key] = _jsonable(v)
        else:
            kwargs[key] = None
            kwargs.setdefault("__src__", {})[key] = code_of(a.value)
    spec = {"ctor": ctor, "args": args, "args_src": args_src, "kwargs": kwargs, "source": code_of(call)}
    if index is not None:
        consts = module_constants(index)
        used = set()
        for a in call.args[1 if skip_first else 0:]:
            used |= {n.value for n in _walk(a.value) if isinstance(n, cst.Name)}
        env = {k: consts[k] for k in sorted(used) if k in consts}
        if env:
            spec["env"] = env
    return spec


_NOT_JSON = object()


def _jsonable(v):
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return {"float": repr(v)}
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        out = [_jsonable(x) for x in v]
        return _NOT_JSON if any(x is _NOT_JSON for x in out) else out
    return _NOT_JSON


# --------------------------------------------------------------------------- skeleton (for the verifier)


def _event_json(e: Event, it: Iteration) -> dict:
    d: dict = {"op": e.op}
    if e.op == "backward":
        d["scaled"] = bool(e.info.get("scaled"))
    elif e.op == "step":
        d["scaled"] = bool(e.info.get("scaled"))
    elif e.op == "zero_grad":
        d["target"] = e.info.get("target", "opt")
        d["set_to_none"] = e.info.get("set_to_none")
    elif e.op == "clip":
        d.update(fn=e.info["fn"], value=_jsonable(e.info["value"]) if e.info["value"] is not None else None,
                 value_src=e.info.get("value_src"), norm_type=e.info.get("norm_type"))
    elif e.op == "sched":
        d["args"] = e.info.get("args", False)
    elif e.op == "accumulate":
        d["how"] = e.info["how"]
    elif e.op == "grad_op":
        d.update({k: e.info[k] for k in ("target", "method", "inplace", "args", "kwargs", "args_src", "arg_srcs",
                                         "kw_srcs")})
        d["args"] = _jsonable(d["args"]) if d["args"] is not None else None
        d["kwargs"] = {k: _jsonable(v) for k, v in d["kwargs"].items()} if d["kwargs"] is not None else None
    elif e.op in ("helper", "opaque"):
        d["code"] = e.recv
        d["ops"] = e.info.get("ops", [])
    cond = _cond_json(e, it)
    if cond is not None:
        d["cond"] = cond
    if e.nested:
        d["nested"] = [code_of(n.iter) if isinstance(n, cst.For) else "while" for n in e.nested]
    return d


def _cond_json(e: Event, it: Iteration) -> dict | None:
    if not e.path:
        return None
    conds = []
    for node, branch in e.path:
        if isinstance(node, cst.If) and branch == 0:
            every = _every(node.test, it.index_var())
            conds.append(every if every is not None else {"opaque": code_of(node.test)})
        else:
            conds.append({"opaque": "else" if isinstance(node, cst.If) else "except"})
    if len(conds) == 1:
        return conds[0]
    return {"all": conds}


def _every(test, idx: str | None) -> dict | None:
    """`(i + 1) % k == 0` / `i % k == 0` / `not (i + 1) % k` on the batch index: {"every": k, "offset": c}."""
    if idx is None:
        return None
    mod = None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
            isinstance(test.comparisons[0].operator, cst.Equal) and literal_number(test.comparisons[0].comparator) == 0:
        mod = test.left
    elif isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        mod = test.expression
    if not (isinstance(mod, cst.BinaryOperation) and isinstance(mod.operator, cst.Modulo)):
        return None
    left = mod.left
    offset = 0
    if isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Add) and \
            isinstance(left.left, cst.Name) and literal_number(left.right) is not None:
        offset = int(literal_number(left.right))
        left = left.left
    if not (isinstance(left, cst.Name) and left.value == idx):
        return None
    k = literal_number(mod.right)
    return {"every": int(k) if k is not None else None, "offset": offset, "every_src": code_of(mod.right)}


def skeleton(it: Iteration) -> dict:
    """The iteration as JSON events: what the verifier's train-loop check renders.

    Only events that run with this backward are kept; for an `if` that does not hold the
    backward, the events of its first branch are kept (the condition is assumed true).
    """
    b = it.backward
    keep: list[Event] = []
    for e in it.events:
        if e.op == "inner":
            continue
        if b is not None and not e.compatible(b):
            continue
        if any(br != 0 for n, br in e.path if not any(n is m for m, _ in (b.path if b else ()))):
            continue
        if e.info.get("exits") and not (b is not None and b.info.get("exits")):
            continue  # a branch that skips the rest of the iteration is taken as not taken
        keep.append(e)
    epoch_start = [e for e in it.epoch_events if e.info.get("where") == "start" and e.op in ("sched", "zero_grad", "step")
                   and not e.nested]
    epoch_end = [e for e in it.epoch_events if e.info.get("where") == "end" and e.op in ("sched", "zero_grad", "step")
                 and not e.nested]
    return {
        "batch": [_event_json(e, it) for e in keep],
        "epoch_start": [_event_json(e, it) for e in epoch_start],
        "epoch_end": [_event_json(e, it) for e in epoch_end],
        "epoch_loop": it.epoch_loop is not None,
        "loop": it.loop is not None,
    }


def statement_at(index, line: int) -> tuple[cst.SimpleStatementLine, cst.BaseSmallStatement] | None:
    """The simple statement starting on `line` (1-based)."""
    for node in _walk(index.module):
        if isinstance(node, cst.SimpleStatementLine):
            pos = index.position(node)
            if pos is not None and pos.start.line == line and node.body:
                return node, node.body[0]
    return None


def grad_op_of(small) -> dict | None:
    """The grad/param op of a bare statement (for the verifier's statement mode)."""
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        return grad_op_info(small.value)
    return None
