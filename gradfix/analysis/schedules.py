"""Which unit a learning-rate scheduler of the file counts its period in.

`scheduler_info` reads the scheduler's construction (its class, period argument and
optimizer) and says whether it is built to be stepped per epoch, per batch, on a
metric (ReduceLROnPlateau), or cannot be told. GF202 and GF203 decide with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from gradfix.analysis.expressions import _arg, code_of, literal_value
from gradfix.analysis.trainstep import literal_number

if TYPE_CHECKING:
    from gradfix.analysis.iteration import Iteration

# Schedulers whose period is counted in epochs by convention (the PyTorch docs step them per epoch).
EPOCH_SCHEDULERS = frozenset({"StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
                              "CosineAnnealingWarmRestarts"})
# Built to be stepped per optimizer step.
BATCH_SCHEDULERS = frozenset({"OneCycleLR", "CyclicLR"})
# Period arguments of the epoch schedulers: (keyword, positional index after the optimizer).
PERIOD_ARGS = {"StepLR": ("step_size", 1), "MultiStepLR": ("milestones", 1), "CosineAnnealingLR": ("T_max", 1),
               "CosineAnnealingWarmRestarts": ("T_0", 1), "ExponentialLR": ("gamma", 1)}
# Names and calls that count optimizer steps, not epochs: len(loader), total_steps, max_iter, num_batches...
_ITERATION_RE = re.compile(r"len\(|iter|batch|loader|steps|updates|samples", re.IGNORECASE)


@dataclass
class SchedulerInfo:
    name: str
    ctor: str | None             # qualname
    call: cst.Call | None
    kind: str                    # epoch / batch / plateau / unknown
    why: str                     # why that kind
    optimizer: str | None        # the optimizer it was built on


def scheduler_info(it: Iteration, recv: str) -> SchedulerInfo:
    bs = [b for b in it.bindings(recv) if not b.is_param]
    params = [b for b in it.bindings(recv) if b.is_param]
    if params or not bs:
        return SchedulerInfo(recv, None, None, "unknown", f"`{recv}` is not constructed in this file", None)
    ctors = {b.ctor for b in bs}
    calls = [b.value for b in bs if isinstance(b.value, cst.Call)]
    if len(ctors) != 1 or None in ctors or len(calls) != len(bs):
        return SchedulerInfo(recv, None, None, "unknown", f"`{recv}` is bound to more than one kind of value", None)
    ctor = ctors.pop()
    call = calls[-1]
    if len({code_of(c) for c in calls}) != 1:
        return SchedulerInfo(recv, ctor, None, "unknown", f"`{recv}` is built in more than one way", None)
    short = ctor.rsplit(".", 1)[-1]
    opt_arg = _arg(call, 0, "optimizer")
    opt = code_of(opt_arg) if opt_arg is not None else None
    if not ctor.startswith("torch.optim.lr_scheduler."):
        if ctor.startswith("transformers.") or "schedule" in short:
            return SchedulerInfo(recv, ctor, call, "batch", f"`{short}` is a per-step schedule", opt)
        return SchedulerInfo(recv, ctor, call, "unknown", f"`{short}` is not a torch scheduler", opt)
    if short == "ReduceLROnPlateau":
        return SchedulerInfo(recv, ctor, call, "plateau", "ReduceLROnPlateau steps on a metric", opt)
    if short in BATCH_SCHEDULERS:
        return SchedulerInfo(recv, ctor, call, "batch", f"{short} is built to be stepped per batch", opt)
    if short not in EPOCH_SCHEDULERS:
        return SchedulerInfo(recv, ctor, call, "unknown", f"{short} may be stepped per batch or per epoch", opt)
    kw, pos = PERIOD_ARGS[short]
    period = _arg(call, pos, kw)
    if short == "ExponentialLR":
        v = literal_number(period) if period is not None else None
        if v is None:
            return SchedulerInfo(recv, ctor, call, "unknown", "ExponentialLR's gamma is not a literal", opt)
        if v >= 0.999:
            return SchedulerInfo(recv, ctor, call, "batch", f"ExponentialLR(gamma={v:g}) decays per step", opt)
        return SchedulerInfo(recv, ctor, call, "epoch", f"ExponentialLR(gamma={v:g})", opt)
    if period is None:
        return SchedulerInfo(recv, ctor, call, "unknown", f"{short} has no {kw}", opt)
    text = code_of(period)
    unit = _period_unit(it, period)
    if unit == "batch":
        return SchedulerInfo(recv, ctor, call, "batch", f"{short}'s {kw}=`{text}` is counted in iterations", opt)
    if unit == "unknown":
        return SchedulerInfo(recv, ctor, call, "unknown", f"{short}'s {kw}=`{text}` may count epochs or iterations", opt)
    return SchedulerInfo(recv, ctor, call, "epoch", f"{short}({kw}={text})", opt)


def _period_unit(it: Iteration, expr, depth: int = 0) -> str:
    """"epoch", "batch" (counted in iterations) or "unknown" for a scheduler's period argument."""
    text = code_of(expr)
    if _ITERATION_RE.search(text):
        return "batch"
    ok, _v = literal_value(expr)
    if ok or "epoch" in text.lower():
        return "epoch"
    if isinstance(expr, cst.BinaryOperation):
        units = {_period_unit(it, expr.left, depth), _period_unit(it, expr.right, depth)}
        if "batch" in units:
            return "batch"
        return "epoch" if units == {"epoch"} else "unknown"
    if isinstance(expr, (cst.List, cst.Tuple)):
        units = {_period_unit(it, e.value, depth) for e in expr.elements}
        return "batch" if "batch" in units else ("epoch" if units <= {"epoch"} else "unknown")
    if isinstance(expr, cst.Name) and depth < 2:
        values = [b.value for b in it.bindings(expr.value) if not b.is_param and isinstance(b.value, cst.BaseExpression)]
        if values:
            units = {_period_unit(it, v, depth + 1) for v in values}
            return units.pop() if len(units) == 1 else ("batch" if "batch" in units else "unknown")
    return "unknown"
