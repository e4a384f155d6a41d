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
from gradfix.analysis.names import qualname
from gradfix.analysis.trainstep import literal_number
from gradfix.analysis.tree import walk as _walk

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
_ITERATION_RE = re.compile(r"len\(|iter|batch|loader|steps|updates|samples|(max|total|num|n)_step\b", re.IGNORECASE)
# Names that hold the number of epochs: epochs, num_epochs, n_epochs, max_epochs, EPOCHS, nb_epoch, epoch_num...
_EPOCHS_NAME_RE = re.compile(r"^(num_|n_|nb_|max_|total_|train_|training_)?epochs?(_num|_count)?$", re.IGNORECASE)
# With no epoch count in the file, a literal period this long is not read as epochs.
LONG_PERIOD = 1000


@dataclass
class SchedulerInfo:
    name: str
    ctor: str | None             # qualname
    call: cst.Call | None
    kind: str                    # epoch / batch / plateau / unknown
    why: str                     # why that kind
    optimizer: str | None        # the optimizer it was built on


def is_torch_scheduler(index, ctor: str | None) -> bool:
    """A torch LR scheduler (`torch.optim.lr_scheduler.*`, what `transformers.get_*_schedule*` returns) or a
    class of the file subclassing one: the schedulers whose `step()` PyTorch expects after
    `optimizer.step()` (and warns about). A project's own class, or a scheduler whose class is not shown
    (a function parameter), has its own contract."""
    if not ctor:
        return False
    if ctor.startswith(("torch.optim.lr_scheduler.", "transformers.")):
        return True
    cls = index.classes.get(ctor)
    if cls is None:
        return False
    for base in cls.bases:
        q = qualname(base.value, index.imports) or ""
        if q.startswith("torch.optim.lr_scheduler.") or (q in index.classes and q != ctor and
                                                          is_torch_scheduler(index, q)):
            return True
    return False


def own_scheduler_classes(index) -> set[str]:
    """Scheduler-named classes (`CycleScheduler`, `WarmupSched`) the file defines, or imports from a module
    other than torch / transformers, that are not torch schedulers: with one in view, a scheduler reaching a
    function as a parameter may be that class rather than a torch one."""
    def compute() -> set[str]:
        out = {name for name in index.classes if _SCHED_NAME.search(name) and not is_torch_scheduler(index, name)}
        for local, full in index.imports.aliases.items():
            root = full.split(".")[0]
            if _SCHED_NAME.search(local) and local[:1].isupper() and root not in ("torch", "transformers",
                                                                                  "timm", "diffusers"):
                out.add(local)
        return out
    return index.memo("schedules.own_scheduler_classes", compute)


_SCHED_NAME = re.compile(r"sched", re.I)


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
    longest = _literal_period(it, period)
    if longest is not None:
        epochs = epoch_count(it)
        if epochs is not None and longest > epochs:
            # StepLR(step_size=30000) over 90 epochs would never decay per epoch: it counts steps
            return SchedulerInfo(recv, ctor, call, "batch", f"{short}'s {kw}=`{text}` is longer than the {epochs:g} "
                                 f"epochs the file trains for, so it counts iterations", opt)
        if epochs is None and longest >= LONG_PERIOD:
            return SchedulerInfo(recv, ctor, call, "unknown", f"{short}'s {kw}=`{text}` is long for an epoch count "
                                 f"and the file shows no epoch count", opt)
    return SchedulerInfo(recv, ctor, call, "epoch", f"{short}({kw}={text})", opt)


def _literal_period(it: Iteration, expr, depth: int = 0) -> float | None:
    """The longest literal a period argument holds (`30000`, `[30, 60]`, a name bound only to one), or None."""
    ok, v = literal_value(expr)
    if ok:
        values = v if isinstance(v, (list, tuple)) else [v]
        nums = [float(x) for x in values if isinstance(x, (int, float)) and not isinstance(x, bool)]
        return max(nums) if nums and len(nums) == len(values) else None
    if isinstance(expr, cst.Name) and depth < 2:
        found = {_literal_period(it, b.value, depth + 1) for b in it.bindings(expr.value)
                 if not b.is_param and isinstance(b.value, cst.BaseExpression)}
        return found.pop() if len(found) == 1 else None
    return None


def epoch_count(it: Iteration) -> float | None:
    """How many epochs the file trains for, when it shows a literal: the epoch loop's
    `range(N)` (`range(start, N)`, `tqdm(range(N))`, `trange(N)`), a name or `args.x` behind it
    bound to a literal or given an argparse default, else the smallest literal the file binds
    to an epoch-count name (`epochs = 90`, `--epochs` default 90). None when it shows none."""
    loop = it.epoch_loop
    if isinstance(loop, cst.For):
        stop = _range_stop(loop.iter)
        if stop is not None:
            n = _count_value(it, stop)
            if n is not None:
                return n
    found = []
    for b in it.index.flow(it.index.module).bindings + (it.flow.bindings if it.flow is not None else []):
        if _EPOCHS_NAME_RE.match(b.name.split(".")[-1]) and not b.is_param and isinstance(b.value, cst.BaseExpression):
            v = literal_number(b.value)
            if v is not None:
                found.append(v)
    found += [v for dest, v in _argparse_defaults(it.index).items() if _EPOCHS_NAME_RE.match(dest)]
    return min(found) if found else None


def _range_stop(expr):
    """N in `range(N)`, `range(a, N)`, `range(a, N, s)`, `trange(N)`, `tqdm(range(N), ...)`, `enumerate(range(N))`."""
    if not isinstance(expr, cst.Call):
        return None
    func = expr.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    pos = [a.value for a in expr.args if a.keyword is None and not a.star]
    if name in ("range", "trange"):
        if len(pos) == 1:
            return pos[0]
        if len(pos) >= 2:
            return pos[1]
        return None
    if name in ("tqdm", "enumerate") and pos:
        return _range_stop(pos[0])
    return None


def _count_value(it: Iteration, expr, depth: int = 0) -> float | None:
    v = literal_number(expr)
    if v is not None or depth > 2:
        return v
    if isinstance(expr, cst.Name):
        bs = it.bindings(expr.value)
        values = {_count_value(it, b.value, depth + 1) for b in bs
                  if not b.is_param and isinstance(b.value, cst.BaseExpression)}
        if any(b.is_param for b in bs) and isinstance(it.scope, cst.FunctionDef):
            for p in it.scope.params.params + it.scope.params.kwonly_params:
                if p.name.value == expr.value and p.default is not None:
                    values.add(_count_value(it, p.default, depth + 1))
        values.discard(None)
        return values.pop() if len(values) == 1 else None
    if isinstance(expr, cst.Attribute):
        # `args.epochs` read from an argparse parser of the file, or `self.epochs` bound in the class
        bs = [b for b in it.bindings(expr) if not b.is_param and isinstance(b.value, cst.BaseExpression)]
        if bs:
            values = {_count_value(it, b.value, depth + 1) for b in bs}
            values.discard(None)
            return values.pop() if len(values) == 1 else None
        return _argparse_defaults(it.index).get(expr.attr.value)
    return None


def _argparse_defaults(index) -> dict:
    """dest -> literal numeric default of every `parser.add_argument("--x", default=N)` in the file."""
    return index.memo("argparse_defaults", lambda: _read_argparse_defaults(index))


def _read_argparse_defaults(index) -> dict:
    out: dict = {}
    for node in _walk(index.module):
        if type(node) is not cst.Call or not isinstance(node.func, cst.Attribute) or \
                node.func.attr.value != "add_argument":
            continue
        dest, default = None, None
        for a in node.args:
            if a.keyword is None and isinstance(a.value, cst.SimpleString) and dest is None:
                ok, flag = literal_value(a.value)
                if ok and isinstance(flag, str) and flag.startswith("--"):
                    dest = flag[2:].replace("-", "_")
                elif ok and isinstance(flag, str) and not flag.startswith("-"):
                    dest = flag
            elif a.keyword is not None and a.keyword.value == "dest":
                ok, d = literal_value(a.value)
                if ok and isinstance(d, str):
                    dest = d
            elif a.keyword is not None and a.keyword.value == "default":
                default = literal_number(a.value)
        if dest is not None and default is not None:
            if dest in out and out[dest] != default:
                out[dest] = min(out[dest], default)
            else:
                out[dest] = default
    return out


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


def passed_torch_scheduler(index, fn: cst.FunctionDef, sched: str, opt: str) -> bool:
    """Every call of `fn` in the file passes, for its parameter `sched`, a name bound to a torch scheduler
    (not ReduceLROnPlateau) built on the very optimizer binding it passes for its parameter `opt`
    (`train(..., optimizer, scheduler)` after `scheduler = LambdaLR(optimizer, ...)`): inside `fn` the two
    parameters are then that scheduler and its optimizer. False when a call cannot tell (no call in the
    file, a default, `*args`, a value of unknown provenance)."""
    from gradfix.analysis.callgraph import passed_arguments

    scheds = passed_arguments(index, fn, sched)
    opts = passed_arguments(index, fn, opt)
    if not scheds or not opts or len(scheds) != len(opts):
        return False
    for (flow, s_arg), (_flow, o_arg) in zip(scheds, opts):
        if not (isinstance(s_arg, cst.Name) and isinstance(o_arg, cst.Name)):
            return False
        b = flow.name_binding(s_arg)
        opt_b = flow.name_binding(o_arg)
        if b is None or opt_b is None or b.is_param or not isinstance(b.value, cst.Call):
            return False
        ctor = qualname(b.value.func, index.imports)
        if not is_torch_scheduler(index, ctor) or ctor.rsplit(".", 1)[-1] == "ReduceLROnPlateau":
            return False
        built_on = _arg(b.value, 0, "optimizer")
        if not isinstance(built_on, cst.Name) or flow.name_binding(built_on) is not opt_b:
            return False
    return True
