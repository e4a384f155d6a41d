"""The file's optimizer and scheduler, rebuilt for the train-loop check's tiny run.

Only literal constructor arguments are used (evaluated with a handful of safe builtins); a scheduler's period
is shrunk to fit the run (EPOCHS x BATCHES steps) and the detail says what was substituted.  What cannot be
rebuilt falls back to SGD(lr=0.1) / StepLR(step_size=1, gamma=0.5), with a note.
"""

from __future__ import annotations

import math

import torch

from .runtime import Untestable, fmt_exc

EPOCHS, BATCHES = 2, 3


def unjson(v):
    if isinstance(v, dict) and set(v) == {"float"}:
        return float(v["float"])
    if isinstance(v, list):
        return [unjson(x) for x in v]
    return v


def _ctor_class(ctor: str | None, prefix: str):
    if not ctor or not ctor.startswith(prefix):
        return None
    obj = torch
    for part in ctor.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj if isinstance(obj, type) else None


_SAFE_BUILTINS = {"min": min, "max": max, "float": float, "int": int, "abs": abs, "pow": pow, "round": round,
                  "len": len, "range": range}


def eval_src(src: str | None, env: dict):
    """Evaluate an argument's source against the file's module-level literal constants only."""
    if not src:
        return False, None
    try:
        code = compile(src, "<arg>", "eval")
        scope = {k: unjson(x) for k, x in env.items()}
        scope.update({"__builtins__": _SAFE_BUILTINS, "math": math})
        v = eval(code, scope)
    except Exception:  # noqa: BLE001
        return False, None
    if isinstance(v, (bool, int, float, list, tuple)) or callable(v):
        return True, v
    return False, None


def _literal_args(spec: dict, notes: list[str], what: str) -> tuple[list, dict]:
    args = []
    srcs = spec.get("args_src") or []
    env = spec.get("env") or {}
    for i, a in enumerate(spec.get("args") or []):
        if a is None:
            ok, v = eval_src(srcs[i] if i < len(srcs) else None, env)
            if ok:
                args.append(v)
                continue
            rest = srcs[i:] if i < len(srcs) else []
            notes.append(f"{what}: `{', '.join(rest)}` is not a literal, left at its default")
            break
        args.append(unjson(a))
    kwargs = {}
    srcmap = (spec.get("kwargs") or {}).get("__src__", {})
    for k, v in (spec.get("kwargs") or {}).items():
        if k == "__src__" or k in ("fused", "foreach", "capturable", "differentiable", "verbose"):
            continue
        if v is None:
            ok, v = eval_src(srcmap.get(k), env)
            if ok:
                kwargs[k] = v
                continue
            notes.append(f"{what}: {k}=`{srcmap.get(k, '?')}` is not a literal, left at its default")
            continue
        kwargs[k] = unjson(v)
    return args, kwargs


def build_optimizer(spec: dict | None, params, notes: list[str]):
    cls = _ctor_class(spec.get("ctor") if spec else None, "torch.optim.")
    if cls is None or not issubclass(cls, torch.optim.Optimizer):
        why = "is not constructed in the file" if not spec or not spec.get("ctor") else f"is {spec['ctor']}"
        notes.append(f"the optimizer {why}: SGD(lr=0.1) stands in for it")
        return torch.optim.SGD(params, lr=0.1), "SGD(lr=0.1)"
    args, kwargs = _literal_args(spec, notes, cls.__name__)
    try:
        opt = cls(params, *args, **kwargs)
    except Exception as e:  # noqa: BLE001
        notes.append(f"{cls.__name__}(...) cannot be built here ({fmt_exc(e)}): SGD(lr=0.1) stands in for it")
        return torch.optim.SGD(params, lr=0.1), "SGD(lr=0.1)"
    shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    return opt, f"{cls.__name__}({shown})"


_PERIODS = {  # scheduler -> {argument: value that fits 2 epochs x 3 batches}
    "StepLR": {"step_size": 1}, "MultiStepLR": {"milestones": [1]}, "CosineAnnealingLR": {"T_max": 2},
    "CosineAnnealingWarmRestarts": {"T_0": 2}, "LinearLR": {"total_iters": 3}, "ConstantLR": {"total_iters": 2},
    "PolynomialLR": {"total_iters": 4},
}
_POS = {  # positional argument names after the optimizer
    "StepLR": ["step_size", "gamma"], "MultiStepLR": ["milestones", "gamma"], "ExponentialLR": ["gamma"],
    "CosineAnnealingLR": ["T_max", "eta_min"], "CosineAnnealingWarmRestarts": ["T_0", "T_mult", "eta_min"],
    "OneCycleLR": ["max_lr", "total_steps", "epochs", "steps_per_epoch"], "CyclicLR": ["base_lr", "max_lr"],
    "LinearLR": ["start_factor", "end_factor", "total_iters"], "ConstantLR": ["factor", "total_iters"],
    "PolynomialLR": ["total_iters", "power"], "LambdaLR": ["lr_lambda"], "MultiplicativeLR": ["lr_lambda"],
}


def _safe_lambda(src: str | None, env: dict):
    ok, f = eval_src(src, env)
    if not ok or not callable(f):
        return None
    try:
        float(f(0))
        float(f(1))
    except Exception:  # noqa: BLE001
        return None
    return f


def build_scheduler(spec: dict | None, opt, notes: list[str]):
    """(scheduler or None, description)."""
    if spec is None:
        return None, "no scheduler"
    ctor = spec.get("ctor")
    cls = _ctor_class(ctor, "torch.optim.lr_scheduler.")
    short = cls.__name__ if cls is not None else (ctor or "").rsplit(".", 1)[-1]
    name = spec.get("name") or "scheduler"
    if short == "ReduceLROnPlateau":
        raise Untestable("ReduceLROnPlateau steps on a metric; the check does not render it")
    if cls is None or short in ("SequentialLR", "ChainedScheduler", "LRScheduler", "_LRScheduler"):
        if ctor and (ctor.startswith("transformers.") or "schedule" in short):
            notes.append(f"`{name}` is {short}: a linear warm-up/decay LambdaLR stands in for it")
            return torch.optim.lr_scheduler.LambdaLR(
                opt, lambda s: min(1.0, (s + 1) / 2) * max(0.0, (EPOCHS * BATCHES + 1 - s) / (EPOCHS * BATCHES + 1))
            ), "linear warm-up/decay (stand-in)"
        why = "is not constructed in the file" if not ctor else f"is {short}"
        notes.append(f"the scheduler `{name}` {why}: StepLR(step_size=1, gamma=0.5) stands in for it")
        return torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5), "StepLR(step_size=1, gamma=0.5)"
    pos_names = _POS.get(short, [])
    given: dict = {}
    args = spec.get("args") or []
    srcs = spec.get("args_src") or []
    for i, a in enumerate(args):
        if i < len(pos_names):
            given[pos_names[i]] = (unjson(a), srcs[i] if i < len(srcs) else None)
    srcmap = (spec.get("kwargs") or {}).get("__src__", {})
    for k, v in (spec.get("kwargs") or {}).items():
        if k != "__src__":
            given[k] = (unjson(v), srcmap.get(k))
    kwargs: dict = {}
    changed = []
    env = spec.get("env") or {}
    overridden = {"OneCycleLR": ("total_steps", "epochs", "steps_per_epoch", "cycle_momentum"),
                  "CyclicLR": ("step_size_up", "step_size_down", "cycle_momentum")}.get(short, ())
    for k, (v, src) in given.items():
        if k in ("verbose", "last_epoch") or k in overridden:
            continue
        if k in _PERIODS.get(short, {}):
            kwargs[k] = _PERIODS[short][k]
            changed.append(f"{k}={src if v is None else repr(v)} -> {kwargs[k]!r}")
            continue
        if k == "lr_lambda":
            f = _safe_lambda(src, env)
            if f is None:
                f = lambda s: 0.5 ** s  # noqa: E731
                notes.append(f"lr_lambda `{src}` cannot be evaluated alone: `lambda s: 0.5 ** s` stands in for it")
            kwargs[k] = f
            continue
        if v is None:
            ok, v = eval_src(src, env)
            if not ok:
                notes.append(f"{short}: {k}=`{src}` is not a literal, left at its default")
                continue
        kwargs[k] = v
    for k, v in _PERIODS.get(short, {}).items():
        if k not in kwargs:
            kwargs[k] = v
            changed.append(f"{k}={v!r}")
    if short == "OneCycleLR":
        for k in ("epochs", "steps_per_epoch"):
            kwargs.pop(k, None)
        kwargs["total_steps"] = EPOCHS * BATCHES + 1
        kwargs.setdefault("max_lr", 0.1)
        kwargs["cycle_momentum"] = False
        changed.append(f"total_steps={EPOCHS * BATCHES + 1}")
    if short == "CyclicLR":
        kwargs.setdefault("base_lr", 0.01)
        kwargs.setdefault("max_lr", 0.1)
        kwargs["step_size_up"] = 2
        kwargs["cycle_momentum"] = False
        changed.append("step_size_up=2")
    if short == "ExponentialLR":
        kwargs.setdefault("gamma", 0.5)
    if short in ("LambdaLR", "MultiplicativeLR") and "lr_lambda" not in kwargs:
        kwargs["lr_lambda"] = lambda s: 0.5 ** s  # noqa: E731
    try:
        sched = cls(opt, **kwargs)
    except Exception as e:  # noqa: BLE001
        notes.append(f"{short}(...) cannot be built here ({fmt_exc(e)}): StepLR(step_size=1, gamma=0.5) stands in")
        return torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5), "StepLR(step_size=1, gamma=0.5)"
    desc = short
    if changed:
        desc += f" with {', '.join(changed)} so that the schedule shows within {EPOCHS * BATCHES} steps"
    return sched, desc
