"""The training iteration as the train-loop check renders it: read from each version of the file, and put in
canonical order.

A skeleton is a JSON-able dict: the batch body's operations in order (zero_grad, forward, backward, step, ...),
what runs at the start and end of each epoch, and a `requires_grad` freeze before training.  Both versions are
re-read with gradfix.analysis.iteration, so the check runs the code that was written, not the rule's idea of it.
No torch here: this is reading, the run is in checks_loop.
"""

from __future__ import annotations

import copy
import json

import libcst as cst

from gradfix.analysis import FileIndex
from gradfix.analysis import expressions, iteration as IT, loopspec

from .context import Ctx
from .runtime import Untestable, fmt_exc


RANK = {"forward": 1, "backward": 2, "accumulate": 3, "unscale": 4, "clip": 5, "grad_op": 5, "step": 6,
        "update": 7, "grad_op_param": 7.5, "sched": 8, "zero_grad": 9}


class Raised(Exception):
    def __init__(self, where: str, error: BaseException):
        super().__init__(str(error))
        self.where, self.error = where, error


def _index(src: str) -> FileIndex:
    return FileIndex(cst.MetadataWrapper(cst.parse_module(src), unsafe_skip_copy=True))


def _json(x):
    return json.loads(json.dumps(x))


DEFAULT_SKELETON = {
    "batch": [{"op": "zero_grad", "target": "opt", "set_to_none": None}, {"op": "forward"},
              {"op": "backward", "scaled": False}, {"op": "step", "scaled": False}],
    "epoch_start": [], "epoch_end": [], "epoch_loop": True, "loop": True, "default": True,
}


def read_skeletons(ctx: Ctx, c: dict) -> tuple[dict, dict, list[str]]:
    """(original skeleton, rewritten skeleton, notes) from the two sources."""
    notes: list[str] = []
    try:
        idx_old = _index(ctx.req.original)
    except Exception as e:  # noqa: BLE001
        raise Untestable(f"the original file cannot be read for the train-loop check: {fmt_exc(e)}")
    try:
        idx_new = _index(ctx.req.rewritten)
    except Exception as e:  # noqa: BLE001
        raise Raised("new", e)
    loop = c.get("loop")
    if loop:
        it_old = IT.locate(idx_old, loop["scope"], int(loop["ordinal"]))
        if it_old is None:
            raise Untestable(f"no training loop #{loop['ordinal']} in {loop['scope']} of the original")
        old = _json(loopspec.skeleton(it_old))
        it_new = IT.locate(idx_new, loop["scope"], int(loop["ordinal"]))
        if it_new is None:
            raise Raised("new", RuntimeError(f"the rewrite has no training loop #{loop['ordinal']} in {loop['scope']}"))
        new = _json(loopspec.skeleton(it_new))
        if c.get("skeleton") is not None and old != c["skeleton"]:
            if c.get("skeleton_after") is None:
                raise Untestable("the original's training iteration reads differently from what the rule saw")
            # read alone, the file misses what the project's other files show (a criterion class defined
            # there, a metric object handed in): both versions are taken as the rule read them
            old, new = c["skeleton"], c["skeleton_after"]
            notes.append("both versions' training iterations read with the project's other files, as the rule "
                         "read them (the file alone reads differently)")
    else:
        old = copy.deepcopy(DEFAULT_SKELETON)
        new = copy.deepcopy(DEFAULT_SKELETON)
        notes.append("the file has no training loop the check can read: the canonical loop zero_grad -> forward -> "
                     "backward -> step stands in for it")
    stmt = c.get("statement")
    if stmt:
        line = int(stmt["line"])
        for tag, idx, sk in (("old", idx_old, old), ("new", idx_new, new)):
            found = loopspec.statement_at(idx, line)
            if found is None:
                if tag == "old":
                    raise Untestable(f"no statement at line {line} of the original")
                raise Raised("new", RuntimeError(f"no statement at line {line} of the rewrite"))
            _line, small = found
            if stmt["mode"] == "grad_op":
                op = loopspec.grad_op_of(small)
                if op is None:
                    if tag == "old":
                        raise Untestable(f"line {line} of the original is not a gradient or parameter op")
                    raise Raised("new", RuntimeError(f"line {line} of the rewrite is not a gradient or parameter op"))
                _place_op(sk, dict(op=("grad_op"), **_json(_jsonable_op(op))), stmt.get("helper"), notes if tag == "old" else [])
            elif stmt["mode"] == "freeze":
                fr = _freeze_of(small)
                if fr is None:
                    if tag == "old":
                        raise Untestable(f"line {line} of the original does not set an attribute to a literal")
                    raise Raised("new", RuntimeError(f"line {line} of the rewrite does not set an attribute to a literal"))
                sk["freeze"] = fr
    return old, new, notes


def _jsonable_op(op: dict) -> dict:
    out = dict(op)
    out["args"] = loopspec._jsonable(out["args"]) if out.get("args") is not None else None
    if out.get("kwargs") is not None:
        out["kwargs"] = {k: loopspec._jsonable(v) for k, v in out["kwargs"].items()}
    return out


def _place_op(sk: dict, ev: dict, helper: str | None, notes: list[str]) -> None:
    batch = sk["batch"]
    if helper:
        hits = [i for i, e in enumerate(batch) if e["op"] == "helper" and (e.get("code") or "") == helper]
        if hits:
            for i in reversed(hits):
                batch[i] = dict(ev, cond=batch[i].get("cond")) if batch[i].get("cond") else dict(ev)
            notes.append(f"the statement runs inside `{helper}`, rendered where the loop calls it")
            return
    steps = [i for i, e in enumerate(batch) if e["op"] == "step"]
    if not steps:
        raise Untestable("the loop has no optimizer step to place the statement around")
    if ev.get("target") == "grad":
        batch.insert(steps[0], ev)
        notes.append("the gradient op is rendered between backward and the optimizer step, where it acts")
    else:
        at = steps[-1] + 1
        while at < len(batch) and batch[at]["op"] == "update":
            at += 1
        batch.insert(at, ev)
        notes.append("the parameter op is rendered right after the optimizer step")


def _freeze_of(small) -> dict | None:
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Attribute):
        ok, v = expressions.literal_value(small.value)
        if ok and isinstance(v, bool):
            return {"attr": small.targets[0].target.attr.value, "value": v}
    return None


# --------------------------------------------------------------------------- canonical order


def canonical(sk: dict, sched_kind: str | None, scaler_on: bool) -> dict:
    """The original's operations in the correct order (see the module docstring)."""
    batch = [dict(e) for e in sk["batch"] if e["op"] not in ("helper", "opaque")]
    start = [dict(e) for e in sk.get("epoch_start", [])]
    end = [dict(e) for e in sk.get("epoch_end", [])]
    scheds = [e for e in batch + start + end if e["op"] == "sched"]
    if sched_kind == "epoch" and scheds:
        batch = [e for e in batch if e["op"] != "sched"]
        start = [e for e in start if e["op"] != "sched"]
        end = [e for e in end if e["op"] != "sched"] + [{"op": "sched", "args": False}]
    else:
        end = end + [e for e in start if e["op"] == "sched"]
        start = [e for e in start if e["op"] != "sched"]
    for e in batch:
        if e["op"] == "accumulate":
            e["how"] = "item"
        if e["op"] == "grad_op":
            e["inplace"] = True
    scaled = any(e["op"] == "backward" and e.get("scaled") for e in batch)
    clips = [e for e in batch if e["op"] == "clip"]
    if scaler_on and scaled and clips and not any(e["op"] == "unscale" for e in batch):
        unscale = {"op": "unscale"}
        if clips[0].get("cond"):
            unscale["cond"] = clips[0]["cond"]
        batch.append(unscale)

    def rank(e):
        if e["op"] == "grad_op" and e.get("target") == "param":
            return RANK["grad_op_param"]
        return RANK.get(e["op"], 5)

    batch = [e for _, e in sorted(enumerate(batch), key=lambda p: (rank(p[1]), p[0]))]
    out = dict(sk, batch=batch, epoch_start=start, epoch_end=end)
    if "freeze" in sk:
        out["freeze"] = dict(sk["freeze"], attr="requires_grad")
    return out


def describe(sk: dict) -> str:
    names = {"zero_grad": "zero_grad", "forward": "forward", "backward": "backward", "unscale": "unscale_",
             "clip": "clip", "step": "step", "update": "update", "sched": "scheduler", "accumulate": "accumulate",
             "grad_op": "grad op"}
    parts = [names.get(e["op"], e["op"]) for e in sk.get("epoch_start", [])]
    inner = [names.get(e["op"], e["op"]) + (" (if)" if e.get("cond") else "") for e in sk["batch"]
             if e["op"] not in ("helper", "opaque")]
    text = " -> ".join(inner)
    if sk.get("epoch_start"):
        text = " -> ".join(parts) + " | per batch: " + text
    if sk.get("epoch_end"):
        text += " | per epoch: " + " -> ".join(names.get(e["op"], e["op"]) for e in sk["epoch_end"])
    if sk.get("freeze"):
        fr = sk["freeze"]
        text = f"`{fr['attr']} = {fr['value']}` on the weight before training; " + text
    return text
